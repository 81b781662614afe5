package confined

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/boxsnap/boxsnap/providers/local/store"
	"golang.org/x/sys/unix"
)

// Open opens rel ("." for the folder itself) beneath the folder, with no link
// followed in any component: a link as rel's last component is not opened
// either (ELOOP), unless flags hold O_PATH|O_NOFOLLOW, which open the link
// itself. The descriptor is the caller's to close.
func (t *Beneath) Open(rel string, flags int) (int, error) {
	fd, err := unix.Openat2(t.Fd, rel, &unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: resolveBeneath.Resolve})
	if err != nil {
		return -1, &fs.PathError{Op: "openat2", Path: t.Dir + "/" + rel, Err: err}
	}
	return fd, nil
}

// GoneOrSwapped says whether an error opening a box's path means the path
// is not there as it was: gone (ENOENT), a folder on its way no longer a
// folder (ENOTDIR), or a link where a folder or file was (ELOOP, or EXDEV
// for one leading out of the folder). The box changed it while boxsnap
// read; nothing behind the link is ever read.
func GoneOrSwapped(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) ||
		errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV)
}

// MarkerFolder opens the box's own folder of boxsnap's files (.boxsnap)
// beneath the box's folder, making it (0700) where it is missing. A link,
// or anything else not a folder, in its place is removed and a folder made
// instead: it is never followed. A box that keeps swapping it is refused.
func (r *Beneath) MarkerFolder() (int, error) {
	for attempt := 0; attempt < 3; attempt++ {
		fd, err := r.Open(MarkerDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW)
		if err == nil {
			return fd, nil
		}
		switch {
		case errors.Is(err, unix.ENOENT):
		case errors.Is(err, unix.ELOOP), errors.Is(err, unix.ENOTDIR):
			var st unix.Stat_t
			if err := unix.Fstatat(r.Fd, MarkerDir, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
				if err := unix.Unlinkat(r.Fd, MarkerDir, 0); err != nil && !errors.Is(err, unix.ENOENT) {
					return -1, &fs.PathError{Op: "remove", Path: r.Dir + "/" + MarkerDir, Err: err}
				}
			}
		default:
			return -1, err
		}
		if err := unix.Mkdirat(r.Fd, MarkerDir, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
			return -1, &fs.PathError{Op: "mkdir", Path: r.Dir + "/" + MarkerDir, Err: err}
		}
	}
	return -1, fmt.Errorf("%s/%s kept being replaced while boxsnap made it a folder", r.Dir, MarkerDir)
}

// ReadAt reads the file name in the folder dfd, not through a link, up to
// limit bytes.
func ReadAt(dfd int, name string, limit int) ([]byte, error) {
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size > int64(limit) {
		return nil, unix.EINVAL
	}
	buf := make([]byte, st.Size+1)
	n := 0
	for n < len(buf) {
		m, err := unix.Read(fd, buf[n:])
		if err != nil {
			return nil, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return buf[:n], nil
}

// WriteAt writes data as name in the folder dfd: under a new temporary name
// (O_EXCL, no link followed), given to uid:gid on the open file when uid is
// not negative, then renamed over name, so a failed write leaves what was
// there and a link put at name is replaced, not followed.
func WriteAt(dfd int, name string, data []byte, mode uint32, uid, gid int) error {
	tmp := name + ".tmp-" + store.RandomSuffix()
	fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	werr := func() error {
		for rest := data; len(rest) > 0; {
			n, err := unix.Write(fd, rest)
			if err != nil {
				return err
			}
			rest = rest[n:]
		}
		if err := unix.Fchmod(fd, mode); err != nil {
			return err
		}
		if uid >= 0 {
			return unix.Fchown(fd, uid, gid)
		}
		return nil
	}()
	if cerr := unix.Close(fd); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = unix.Renameat(dfd, tmp, dfd, name)
	}
	if werr != nil {
		_ = unix.Unlinkat(dfd, tmp, 0)
		return fmt.Errorf("write %s: %w", name, werr)
	}
	return nil
}

// FileID is a file's device and inode: which file a scan saw at a path.
type FileID struct{ Dev, Ino uint64 }

// ErrNotRegular marks a path that, opened, is not a regular file: a pipe,
// a folder or a device put in a file's place.
var ErrNotRegular = errors.New("not a regular file")

// ErrNotScanned marks a path that, opened, is another file than the one
// the scan saw there (its device and inode differ): it was replaced since.
var ErrNotScanned = errors.New("another file than the one read before")

// OpenRegular opens the box's file rel beneath the folder to read it:
// non-blocking (a pipe put in its place answers at once, never holding the
// open or a read), checked by its descriptor to be a regular file, and,
// when want is set, to be the file the scan saw (device and inode). It
// gives the file's stat as opened. A regular file reads the same with
// O_NONBLOCK as without.
func (t *Beneath) OpenRegular(rel string, want *FileID) (*os.File, unix.Stat_t, error) {
	var st unix.Stat_t
	fd, err := t.Open(rel, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY)
	if err != nil {
		return nil, st, err
	}
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, st, &fs.PathError{Op: "fstat", Path: t.Dir + "/" + rel, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, st, ErrNotRegular
	}
	if want != nil && (st.Dev != want.Dev || st.Ino != want.Ino) {
		unix.Close(fd)
		return nil, st, ErrNotScanned
	}
	return os.NewFile(uintptr(fd), t.Dir+"/"+rel), st, nil
}

// The box's own folder of boxsnap's files, inside the box: its identity
// marker, which a fork rewrites so that the new box never acts as its
// source.
const (
	MarkerDir    = ".boxsnap"
	IdentityFile = ".boxsnap/identity" // the identity marker
	AccessFile   = ".boxsnap/env"      // the box's access file
)
