package ship

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// noUnnamed is set once the file system of the host's content refused an
// unnamed file (O_TMPFILE): it is not asked again.
var noUnnamed atomic.Bool

// writeUnnamed puts b in the host's content as file path through an
// unnamed file in tmpDir, read-only from the start, given its one name
// once whole: one link, no chmod and no rename a piece, and nothing left
// behind when a fetch stops half way; note (when set) is told its stat
// once named. It answers done false, having written nothing, where the
// file system makes no unnamed file.
func writeUnnamed(tmpDir, path string, b []byte, hash string, note func(string, *unix.Stat_t)) (done bool, err error) {
	if noUnnamed.Load() {
		return false, nil
	}
	fd, err := unix.Open(tmpDir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o444)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EINVAL) {
		noUnnamed.Store(true)
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("new content file: %w", err)
	}
	f := os.NewFile(uintptr(fd), "content")
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		return true, err
	}
	err = unix.Linkat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", fd), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
	if errors.Is(err, unix.EEXIST) {
		return true, nil // the same content, named meanwhile by another
	}
	if err == nil {
		noteOpen(f, hash, note) // its link moved its change time
	}
	return true, err
}

// noteOpen tells note (when set) the stat of the open content file f,
// named hash once its bytes, checked, were written.
func noteOpen(f *os.File, hash string, note func(string, *unix.Stat_t)) {
	if note == nil {
		return
	}
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) == nil {
		note(hash, &st)
	}
}
