package journal

import (
	"errors"
	"path"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers/local/confined"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// Lower answers which files of a box that is an overlay over a shared
// tree lie in that tree, from the overlay's upper layer. A nil Lower is a
// box that is no overlay: no file lies in a lower layer. The package doc
// says why such a file is no hard link of the box's, and how it is told.
type Lower struct {
	upper *confined.Beneath
	// The upper's folder of the last path asked about, kept open for the
	// next until Forget: a take asks in path order while the box is
	// paused; the journal forgets it after each name, as the box may
	// rename its folders between two.
	dir   string
	dirFd int
}

// OpenLower opens the upper layer upper of a box's overlay, or answers nil
// for "" (a box that is no overlay) or an upper that cannot be opened (its
// files are then taken for the box's own). The caller closes it.
func OpenLower(upper string) *Lower {
	if upper == "" {
		return nil
	}
	t, err := confined.OpenTree(upper)
	if err != nil {
		return nil
	}
	return &Lower{upper: t, dirFd: -1}
}

// Close lets go of the upper layer.
func (l *Lower) Close() {
	if l == nil {
		return
	}
	l.Forget()
	_ = l.upper.Close()
}

// Forget lets go of the folder kept open from the last question.
func (l *Lower) Forget() {
	if l == nil || l.dirFd < 0 {
		return
	}
	_ = unix.Close(l.dirFd)
	l.dirFd, l.dir = -1, ""
}

// Holds says whether the box's file rel, stat'ed as st, is a regular file
// whose data lies in the lower layer: rel has no name in the upper layer.
// It asks the disk only for a file of more than one link.
func (l *Lower) Holds(rel string, st *unix.Stat_t) bool {
	if l == nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink < 2 || confined.CheckRel(rel) != "" || rel == "." {
		return false
	}
	dir, name := path.Dir(rel), path.Base(rel)
	if dir != l.dir || l.dirFd < 0 {
		l.Forget()
		l.dir = dir
		fd, err := l.upper.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW)
		if err != nil {
			// No folder of that path in the upper layer: the box's folder
			// is the lower layer's alone, and so is every file in it.
			return errors.Is(err, unix.ENOENT)
		}
		l.dirFd = fd
	}
	var up unix.Stat_t
	return errors.Is(unix.Fstatat(l.dirFd, name, &up, unix.AT_SYMLINK_NOFOLLOW), unix.ENOENT)
}

// SameShared says whether the box's regular file e, stat'ed as st, is the
// file pe recorded at its path though its change time moved: the same
// inode, size, mtime, mode and owner, and its data still lies in the
// shared tree (Holds). Such a file's content cannot change without a
// copy-up into the upper layer, which gives its path a name there; its
// change time moves as another tree links or unlinks the same content
// object, which is no change of the box's.
func (l *Lower) SameShared(pe, e *store.Entry, st *unix.Stat_t) bool {
	if l == nil || pe == nil || pe.Type != store.TypeFile || e.Type != store.TypeFile ||
		pe.Ino != e.Ino || pe.Size != e.Size || pe.MTime != e.MTime || pe.Mode != e.Mode ||
		pe.UID != e.UID || pe.GID != e.GID {
		return false
	}
	return l.Holds(e.Path, st)
}
