package pgcluster

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// folderLock is an exclusive flock on <data folder>.lock. The kernel drops it
// when its holder dies, so a killed boxsnap never leaves the folder locked.
// The file itself stays: removing it would let two processes lock two
// different files of one name.
type folderLock struct {
	f *os.File
}

// lockDataDir takes the data folder's lock, or says which process holds it.
func lockDataDir(dataDir string) (*folderLock, error) {
	path := dataDir + ".lock"
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("the data folder %s cannot be written: %w: choose a folder boxsnap may write, or fix its parent's permissions", dataDir, err)
	}
	if err := flockSoon(f); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			b, _ := os.ReadFile(path)
			pid := strings.TrimSpace(string(b))
			if pid == "" {
				pid = "unknown"
			}
			return nil, fmt.Errorf("data folder %s is in use by another boxsnap (pid %s): stop that one first, or give this one another data folder", dataDir, pid)
		}
		return nil, fmt.Errorf("lock the data folder %s: %w", dataDir, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &folderLock{f: f}, nil
}

// lockWait is how long a lock another process holds is tried again: a
// process of this one that forked and has not yet run its program holds a
// copy of the lock's descriptor until it does (the descriptor closes at
// exec), so a lock just released can read as held for that instant.
const lockWait = 2 * time.Second

// flockSoon takes f's exclusive lock, trying again for lockWait while
// another holds it.
func flockSoon(f *os.File) error {
	deadline := time.Now().Add(lockWait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// release drops the lock; the file is left for the next holder.
func (l *folderLock) release() {
	if l != nil && l.f != nil {
		_ = l.f.Close()
		l.f = nil
	}
}
