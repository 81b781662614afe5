package confined

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"

	"golang.org/x/sys/unix"
)

// Beneath is a folder (a box's) opened once: the one way boxsnap touches a
// box's files. The take and the scan read through it (open, Lstat, Readlink),
// the compare hashes through it, and the restore, the fork, the reset and
// set straight make every change of a path through it (confined.go has the
// reads and the access file's writes). A path is slash-separated and relative to
// the folder (checkRel: no "..", no empty or "." part; "." is the folder
// itself). Its folder is found by the kernel beneath the opened one with no
// link followed on the way (openat2 with RESOLVE_BENEATH and
// RESOLVE_NO_SYMLINKS), and the path is changed by its name in that folder's
// descriptor, never by a full path; its last component is never followed
// either. So a restore, which runs as root, never writes outside the box,
// whatever the box's process made of its folder and whatever a manifest
// says: a link where a folder should be makes the call fail, and nothing is
// written through it.
//
// os.Root does not do for this: it follows links inside its folder, and its
// Chmod and Chtimes follow a link put in the last component's place.
type Beneath struct {
	Dir string // for errors
	Fd  int    // O_PATH, O_DIRECTORY
}

// resolveBeneath is how every folder of a path is found.
var resolveBeneath = unix.OpenHow{
	Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
	Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
}

// OpenTree opens dir for changes beneath it. dir itself may be reached
// through links: it is boxsnap's own path to the box's folder.
func OpenTree(dir string) (*Beneath, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	return &Beneath{Dir: dir, Fd: fd}, nil
}

// Close lets go of the folder.
func (t *Beneath) Close() error { return unix.Close(t.Fd) }

// Sub opens the folder rel beneath t as a tree of its own, for many changes
// in one folder.
func (t *Beneath) Sub(rel string) (*Beneath, error) {
	if err := cleanArg("open", rel); err != nil {
		return nil, err
	}
	fd, err := unix.Openat2(t.Fd, rel, &resolveBeneath)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: rel, Err: err}
	}
	return &Beneath{Dir: t.Dir + "/" + rel, Fd: fd}, nil
}

// cleanArg refuses a path that is not clean and relative.
func cleanArg(op, rel string) error {
	if why := CheckRel(rel); why != "" {
		return &fs.PathError{Op: op, Path: rel, Err: fmt.Errorf("refused: the path %s", why)}
	}
	return nil
}

// at opens the folder holding rel, found beneath t with no link followed,
// and gives rel's name in it; done closes the folder. rel is not ".".
func (t *Beneath) at(op, rel string) (dfd int, name string, done func(), err error) {
	if err := cleanArg(op, rel); err != nil {
		return -1, "", nil, err
	}
	if rel == "." {
		return -1, "", nil, &fs.PathError{Op: op, Path: rel, Err: errors.New("the folder itself has no name in it")}
	}
	dir, name := path.Dir(rel), path.Base(rel)
	if dir == "." {
		return t.Fd, name, func() {}, nil
	}
	fd, err := unix.Openat2(t.Fd, dir, &resolveBeneath)
	if err != nil {
		return -1, "", nil, &fs.PathError{Op: op, Path: rel, Err: err}
	}
	return fd, name, func() { unix.Close(fd) }, nil
}

// do runs fn on rel's folder and name, naming rel in its error.
func (t *Beneath) do(op, rel string, fn func(dfd int, name string) error) error {
	dfd, name, done, err := t.at(op, rel)
	if err != nil {
		return err
	}
	defer done()
	if err := fn(dfd, name); err != nil {
		return &fs.PathError{Op: op, Path: rel, Err: err}
	}
	return nil
}

// Mkdir makes the folder rel.
func (t *Beneath) Mkdir(rel string, perm fs.FileMode) error {
	return t.do("mkdir", rel, func(dfd int, name string) error {
		return unix.Mkdirat(dfd, name, uint32(perm.Perm()))
	})
}

// Symlink makes the link rel leading to target. The target is data: it may
// name anything, and nothing here follows it.
func (t *Beneath) Symlink(target, rel string) error {
	return t.do("symlink", rel, func(dfd int, name string) error {
		return unix.Symlinkat(target, dfd, name)
	})
}

// Mkfifo makes the named pipe rel.
func (t *Beneath) Mkfifo(rel string, perm fs.FileMode) error {
	return t.do("mkfifo", rel, func(dfd int, name string) error {
		return unix.Mkfifoat(dfd, name, uint32(perm.Perm()))
	})
}

// Remove removes rel, a file, a link, a pipe or an empty folder.
func (t *Beneath) Remove(rel string) error {
	return t.do("remove", rel, func(dfd int, name string) error {
		err := unix.Unlinkat(dfd, name, 0)
		if errors.Is(err, unix.EISDIR) {
			err = unix.Unlinkat(dfd, name, unix.AT_REMOVEDIR)
		}
		return err
	})
}

// RemoveAll removes rel and all it holds; it is no error when rel is
// missing. The removal inside rel is os.Root's, rooted at rel's folder as
// found beneath t: it never leaves that folder and follows no link.
func (t *Beneath) RemoveAll(rel string) error {
	return t.do("removeall", rel, func(dfd int, name string) error {
		r, err := os.OpenRoot(fmt.Sprintf("/proc/self/fd/%d", dfd))
		if err != nil {
			return err
		}
		defer r.Close()
		return r.RemoveAll(name)
	})
}

// Readlink gives the target of the link rel.
func (t *Beneath) Readlink(rel string) (string, error) {
	var target string
	err := t.do("readlink", rel, func(dfd int, name string) error {
		for size := 256; ; size *= 2 {
			buf := make([]byte, size)
			n, err := unix.Readlinkat(dfd, name, buf)
			if err != nil {
				return err
			}
			if n < size {
				target = string(buf[:n])
				return nil
			}
		}
	})
	return target, err
}

// Lstat stats rel itself, never what it leads to.
func (t *Beneath) Lstat(rel string, st *unix.Stat_t) error {
	if rel == "." {
		if err := unix.Fstat(t.Fd, st); err != nil {
			return &fs.PathError{Op: "lstat", Path: rel, Err: err}
		}
		return nil
	}
	return t.do("lstat", rel, func(dfd int, name string) error {
		return unix.Fstatat(dfd, name, st, unix.AT_SYMLINK_NOFOLLOW)
	})
}

// OpenFile opens rel as os.OpenFile does, except that a link in its place
// is never followed (O_NOFOLLOW).
func (t *Beneath) OpenFile(rel string, flag int, perm fs.FileMode) (*os.File, error) {
	var f *os.File
	err := t.do("open", rel, func(dfd int, name string) error {
		fd, err := unix.Openat(dfd, name, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
		if err != nil {
			return err
		}
		f = os.NewFile(uintptr(fd), t.Dir+"/"+rel)
		return nil
	})
	return f, err
}

// Rename moves oldRel to newRel, both beneath t.
func (t *Beneath) Rename(oldRel, newRel string) error {
	return t.do("rename", oldRel, func(odfd int, oname string) error {
		return t.do("rename", newRel, func(ndfd int, nname string) error {
			return unix.Renameat(odfd, oname, ndfd, nname)
		})
	})
}

// Lchown sets the owner of rel itself (a link's own, not its target's).
func (t *Beneath) Lchown(rel string, uid, gid int) error {
	if rel == "." {
		if err := unix.Fchownat(t.Fd, "", uid, gid, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return &fs.PathError{Op: "lchown", Path: rel, Err: err}
		}
		return nil
	}
	return t.do("lchown", rel, func(dfd int, name string) error {
		return unix.Fchownat(dfd, name, uid, gid, unix.AT_SYMLINK_NOFOLLOW)
	})
}

// Chmod sets the mode of rel, with its setuid, setgid and sticky bits. A
// link has no mode of its own: one found in rel's place is refused, never
// followed.
func (t *Beneath) Chmod(rel string, mode fs.FileMode) error {
	chmod := func(fd int) error {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return err
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return errors.New("it is a link, which has no mode of its own")
		}
		// An O_PATH descriptor takes no fchmod; its /proc link names the
		// very file it opened.
		return unix.Chmod(fmt.Sprintf("/proc/self/fd/%d", fd), unixMode(mode))
	}
	if rel == "." {
		if err := chmod(t.Fd); err != nil {
			return &fs.PathError{Op: "chmod", Path: rel, Err: err}
		}
		return nil
	}
	return t.do("chmod", rel, func(dfd int, name string) error {
		fd, err := unix.Openat(dfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return chmod(fd)
	})
}

// Lutimes sets the access and modification times of rel itself, in nanoseconds
// since the epoch.
func (t *Beneath) Lutimes(rel string, atime, mtime int64) error {
	ts := []unix.Timespec{unix.NsecToTimespec(atime), unix.NsecToTimespec(mtime)}
	if rel == "." {
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", t.Fd), ts, 0); err != nil {
			return &fs.PathError{Op: "utimes", Path: rel, Err: err}
		}
		return nil
	}
	return t.do("utimes", rel, func(dfd int, name string) error {
		return unix.UtimesNanoAt(dfd, name, ts, unix.AT_SYMLINK_NOFOLLOW)
	})
}

// unixMode is a FileMode's permission, setuid, setgid and sticky bits as
// chmod takes them.
func unixMode(m fs.FileMode) uint32 {
	out := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		out |= unix.S_ISUID
	}
	if m&fs.ModeSetgid != 0 {
		out |= unix.S_ISGID
	}
	if m&fs.ModeSticky != 0 {
		out |= unix.S_ISVTX
	}
	return out
}

// ReadDirBeneath lists the folder rel beneath t, reached through no link.
func ReadDirBeneath(t *Beneath, rel string) ([]fs.DirEntry, error) {
	fd, err := t.Open(rel, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), t.Dir+"/"+rel)
	defer f.Close()
	return f.ReadDir(-1)
}
