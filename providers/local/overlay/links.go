package overlay

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers/local/confined"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// Links makes a shared tree's files hard links to the store's content
// objects where that is safe, so writing a tree costs a link a file, not
// a new file and a copy of its bytes (on ext4 a new file's making is most
// of a tree's cost). See the package doc for why a link is safe.
type Links struct {
	*store.Store
	// Hash hashes an open file from its start (content.Copier.HashFile).
	Hash func(f *os.File) (string, int64, error)
	// Checked says whether an object, stat'ed as st, is unmoved since
	// its bytes were known to hash to its name, and NoteChecked notes
	// that they do (content.Copier's); nil for never.
	Checked     func(hash string, st *unix.Stat_t) bool
	NoteChecked func(hash string, st *unix.Stat_t)
	// Parallel runs fn for 0..n-1 on the backend's workers.
	Parallel func(ctx context.Context, n int, fn func(i int) error) error
}

// errNotLinked marks a file that is written as a copy after all.
var errNotLinked = errors.New("not linked")

// Split answers the file entries of m a tree in dir can hold as links to
// the store's content (at most one path per object, so each path of the
// tree is its own file, as a copy's would be), and m's other entries,
// which are written as copies. None is linked unless boxsnap runs as root
// (an object's owner is set as the snapshot has it), the tree and the
// store's content are on one file system, and m's paths all stay beneath
// the tree.
func (l *Links) Split(dir string, m *store.Manifest) (link, rest []store.Entry) {
	if os.Geteuid() != 0 || confined.CheckEntries(m.Entries) != nil || !sameFileSystem(dir, l.Path(store.DirContent)) {
		return nil, m.Entries
	}
	chosen := make(map[string]bool)
	for _, e := range m.Entries {
		if e.Type == store.TypeFile && !chosen[e.Hash] && linkable(&e) && l.objectFits(&e) {
			chosen[e.Hash] = true
			link = append(link, e)
			continue
		}
		rest = append(rest, e)
	}
	return link, rest
}

// linkable says whether a file as e has it may be a link to the store's
// object: owned by root, and neither setuid, setgid, sticky nor writable
// by its group or others, so the object in the store never becomes a
// program that raises its runner, nor a file another host user may
// change or re-mode (only an owner may chmod).
func linkable(e *store.Entry) bool {
	m := e.FileMode()
	return len(e.Hash) == 64 && e.UID == 0 && m&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) == 0 && m.Perm()&0o022 == 0
}

// objectFits says whether e's object is in the store as a file of e's
// size that either has e's details already or is held by no tree (its
// only name is the store's), so its details may be set to e's.
func (l *Links) objectFits(e *store.Entry) bool {
	var st unix.Stat_t
	if unix.Lstat(l.ContentPath(e.Hash), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size != e.Size {
		return false
	}
	return hasDetails(&st, e) || st.Nlink == 1
}

// hasDetails says whether a file's stat has e's mode, owner and mtime.
func hasDetails(st *unix.Stat_t, e *store.Entry) bool {
	return store.FileModeOf(st.Mode) == e.FileMode() && st.Uid == e.UID && st.Gid == e.GID && st.Mtim.Nano() == e.MTime
}

// sameFileSystem says whether a and b are on one file system.
func sameFileSystem(a, b string) bool {
	var sa, sb unix.Stat_t
	return unix.Stat(a, &sa) == nil && unix.Stat(b, &sb) == nil && sa.Dev == sb.Dev
}

// Link names each of link's objects at its path in the tree dir, whose
// folders Split's rest already made, and puts back the times of the
// folders it linked in from m. Each object is opened once, checked
// against its hash and size, given e's details if it has none of a tree's
// yet, and linked by that open file, so what is linked is what was
// checked; an object unmoved since this process last wrote or checked
// it (Checked) is not read again. It answers how many it could not link
// (written as copies after); an error is a cancelled context or a folder
// it cannot set.
func (l *Links) Link(ctx context.Context, dir string, link []store.Entry, m *store.Manifest) (int, error) {
	t, err := confined.OpenTree(dir)
	if err != nil {
		return len(link), fmt.Errorf("the shared tree: %w", err)
	}
	defer t.Close()
	var failed atomic.Int64
	runs := folderRuns(link)
	err = l.Parallel(ctx, len(runs), func(r int) error {
		from, to := runs[r], len(link)
		if r+1 < len(runs) {
			to = runs[r+1]
		}
		return l.linkRun(ctx, t, link[from:to], &failed)
	})
	if err != nil {
		return int(failed.Load()), err
	}
	return int(failed.Load()), l.putFolderTimes(ctx, t, link, m)
}

// runMax bounds how many links one worker makes in one folder at a time,
// so the workers share a large folder.
const runMax = 256

// folderRuns cuts link, in path order, into runs of at most runMax
// entries of one folder each, answering where each run starts: a folder
// is opened once a run, not once a file.
func folderRuns(link []store.Entry) []int {
	var runs []int
	for i := range link {
		if i == 0 || i-runs[len(runs)-1] >= runMax || path.Dir(link[i].Path) != path.Dir(link[i-1].Path) {
			runs = append(runs, i)
		}
	}
	return runs
}

// linkRun links each of run's objects, all of one folder beneath t, in
// that folder, counting in failed those it could not link; an error is a
// cancelled context.
func (l *Links) linkRun(ctx context.Context, t *confined.Beneath, run []store.Entry, failed *atomic.Int64) error {
	folder := t
	if d := path.Dir(run[0].Path); d != "." {
		var err error
		if folder, err = t.Sub(d); err != nil {
			failed.Add(int64(len(run)))
			return nil
		}
		defer folder.Close()
	}
	for i := range run {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := l.linkOne(folder, &run[i]); err != nil {
			failed.Add(1)
		}
	}
	return nil
}

// linkOne links e's object at e.Path's name in folder, its folder. Of an
// object's details only those that differ from e's are set.
func (l *Links) linkOne(folder *confined.Beneath, e *store.Entry) error {
	f, err := os.OpenFile(l.ContentPath(e.Hash), os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return err
	}
	fits := hasDetails(&st, e)
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size != e.Size || (!fits && st.Nlink != 1) {
		return errNotLinked
	}
	// An object unmoved since this process wrote or checked it is not
	// read again; any other is hashed before it is linked.
	if l.Checked == nil || !l.Checked(e.Hash, &st) {
		if h, n, err := l.Hash(f); err != nil || h != e.Hash || n != e.Size {
			return errNotLinked // the copy's check refuses damaged content in its words
		}
	}
	self := fmt.Sprintf("/proc/self/fd/%d", f.Fd())
	if !fits {
		if err := setDetails(f, self, &st, e); err != nil {
			return err
		}
	}
	if err := unix.Linkat(unix.AT_FDCWD, self, folder.Fd, path.Base(e.Path), unix.AT_SYMLINK_FOLLOW); err != nil {
		return err
	}
	// Its details and its link moved its change time, not its bytes.
	if l.NoteChecked != nil && unix.Fstat(int(f.Fd()), &st) == nil {
		l.NoteChecked(e.Hash, &st)
	}
	return nil
}

// setDetails gives the open object f (self its /proc path), stat'ed as
// st, e's owner, mode and mtime, setting only what differs: each is a
// journalled change of the object's inode.
func setDetails(f *os.File, self string, st *unix.Stat_t, e *store.Entry) error {
	if st.Uid != e.UID || st.Gid != e.GID {
		if err := f.Chown(int(e.UID), int(e.GID)); err != nil {
			return err
		}
	}
	// After chown, which clears setuid; an object never holds it, as
	// linkable refuses a setuid file.
	if store.FileModeOf(st.Mode) != e.FileMode() {
		if err := f.Chmod(e.FileMode()); err != nil {
			return err
		}
	}
	// The object's atime is left as it is: the content cache evicts by
	// it, and a fork's reads change a tree's atimes anyway.
	if st.Mtim.Nano() != e.MTime {
		ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, unix.NsecToTimespec(e.MTime)}
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, self, ts, 0); err != nil {
			return err
		}
	}
	return nil
}

// putFolderTimes puts back the times m gives the folders a link was made
// in (a link changes its folder's mtime), on the workers at once: a
// folder's times are its own, and setting them changes none of its
// folder's.
func (l *Links) putFolderTimes(ctx context.Context, t *confined.Beneath, link []store.Entry, m *store.Manifest) error {
	touched := make(map[string]bool)
	for _, e := range link {
		touched[path.Dir(e.Path)] = true
	}
	var dirs []*store.Entry
	for i := range m.Entries {
		if e := &m.Entries[i]; e.Type == store.TypeDir && touched[e.Path] {
			dirs = append(dirs, e)
		}
	}
	return l.Parallel(ctx, len(dirs), func(i int) error {
		return t.Lutimes(dirs[i].Path, dirs[i].ATime, dirs[i].MTime)
	})
}
