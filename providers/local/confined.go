package local

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"golang.org/x/sys/unix"
)

// boxRoot is a box's folder held open, so that paths inside it are opened
// beneath it (openat2 RESOLVE_BENEATH) with no link followed in any of their
// components (RESOLVE_NO_SYMLINKS): a folder the box swaps for a link to a
// host folder is never gone through. os.Root is not enough here: it
// follows links that stay inside the folder.
type boxRoot struct {
	dir string
	fd  int
}

// beneath is how every path of a box is resolved.
const beneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// openBoxRoot opens dir itself, which must be a folder and not a link.
func openBoxRoot(dir string) (*boxRoot, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	return &boxRoot{dir: dir, fd: fd}, nil
}

func (r *boxRoot) close() { _ = unix.Close(r.fd) }

// open opens rel ("." for the folder itself) beneath the box's folder. A
// link as rel's last component is not opened either (ELOOP), unless flags
// hold O_PATH|O_NOFOLLOW, which open the link itself.
func (r *boxRoot) open(rel string, flags int) (int, error) {
	fd, err := unix.Openat2(r.fd, rel, &unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: beneath})
	if err != nil {
		return -1, &fs.PathError{Op: "openat2", Path: r.dir + "/" + rel, Err: err}
	}
	return fd, nil
}

// lstat stats rel itself (a link is not followed) beneath the folder.
func (r *boxRoot) lstat(rel string, st *unix.Stat_t) error {
	fd, err := r.open(rel, unix.O_PATH|unix.O_NOFOLLOW)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fstat(fd, st)
}

// readlink reads the link rel, its folder opened beneath the box's folder.
func (r *boxRoot) readlink(rel string) (string, error) {
	dfd, name := r.fd, rel
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		fd, err := r.open(rel[:i], unix.O_PATH|unix.O_DIRECTORY)
		if err != nil {
			return "", err
		}
		defer unix.Close(fd)
		dfd, name = fd, rel[i+1:]
	}
	buf := make([]byte, 256)
	for {
		n, err := unix.Readlinkat(dfd, name, buf)
		if err != nil {
			return "", &fs.PathError{Op: "readlinkat", Path: r.dir + "/" + rel, Err: err}
		}
		if n < len(buf) {
			return string(buf[:n]), nil
		}
		if len(buf) >= unix.PathMax {
			return "", fmt.Errorf("readlink %s: target too long", rel)
		}
		buf = make([]byte, 2*len(buf))
	}
}

// goneOrSwapped says whether an error opening a box's path means the path
// is not there as it was: gone (ENOENT), a folder on its way no longer a
// folder (ENOTDIR), or a link where a folder or file was (ELOOP, or EXDEV
// for one leading out of the folder). The box changed it while boxsnap
// read; nothing behind the link is ever read.
func goneOrSwapped(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) ||
		errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV)
}
