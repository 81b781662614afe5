package store

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// LockFile takes an exclusive flock of the file at path (made if missing),
// shared by every boxsnap process on the data folder, waiting as long as
// another holds it, and answers the function that lets it go. what names
// the lock in errors ("the disks' lock").
func LockFile(path, what string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return func() { f.Close() }, nil
}
