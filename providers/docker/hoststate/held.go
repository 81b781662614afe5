package hoststate

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
)

// State is the backend's state folder on this host ("" for none) and the
// logger its sweeps report to.
type State struct {
	Dir string
	Log *slog.Logger
}

// A held file is a file of the state folder that a live take holds under
// an exclusive lock (flock) for as long as it needs it: the kernel lets the
// lock go with the process, so a file whose lock is free was left by a
// process killed mid-take, and the next start of the backend deals with
// it. Two processes (the web app and the worker) may share the folder: a
// file another live process holds is never touched.

// layerFolder is the folder of the state folder where takes write their
// layers' files.
const layerFolder = "layers"

// LayerPattern names a layer's file.
const LayerPattern = "boxsnap-layer-*.tar"

// CreateHeld makes a new file in dir named after pattern, locked. A sweep
// that took the lock first has removed the name, so the file is made again.
func CreateHeld(dir, pattern string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	for range 3 {
		f, err := os.CreateTemp(dir, pattern)
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil && stillNamed(f) {
			return f, nil
		}
		_ = f.Close()
	}
	return nil, fmt.Errorf("a file of %s was taken by another process's sweep three times", dir)
}

// DropHeld removes a held file and lets its lock go.
func DropHeld(f *os.File) {
	_ = os.Remove(f.Name())
	_ = f.Close()
}

// stillNamed says whether the file's name still names the open file.
func stillNamed(f *os.File) bool {
	a, err1 := f.Stat()
	b, err2 := os.Stat(f.Name())
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// sweepLeft hands each file of dir named after pattern that no live
// process holds to left (with its content), then removes it; a file left
// says why it stays. It answers how many it removed.
func sweepLeft(dir, pattern string, left func(content []byte) error) (int, error) {
	names, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, p := range names {
		f, err := os.Open(p)
		if err != nil {
			continue // gone already
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil || !stillNamed(f) {
			_ = f.Close() // a live process holds it, or swept it first
			continue
		}
		var content []byte
		if left != nil {
			content, err = os.ReadFile(p)
			if err == nil {
				err = left(content)
			}
		}
		if err == nil {
			err = os.Remove(p)
		}
		_ = f.Close()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", filepath.Base(p), err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// LayerDir is where a take writes its layers' files: the state folder's,
// swept at each start, or with none the host's temporary folder.
func (s State) LayerDir() string {
	if s.Dir == "" {
		return os.TempDir()
	}
	return filepath.Join(s.Dir, layerFolder)
}
