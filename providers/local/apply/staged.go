package apply

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers/local/confined"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// staging holds the files of a restore or fork written, with their owner,
// mode and times, from the content a fetch brings, as it comes: each is its own
// new file (never a link to the host's content, so nothing the box does to
// it reaches the store), kept in a folder of the store's own until every
// piece is checked, then linked into the box's folder. Nothing in the box
// changes before the whole fetch is checked, and a fetch that fails leaves
// only this folder, removed.
type staging struct {
	dir  string
	dfd  int
	root bool
	// byHash is the files of the restore to write, by their content.
	byHash map[string][]*store.Entry
	n      atomic.Int64
	mu     sync.Mutex
	// files is each staged file's name in dir, by the path it goes to.
	files map[string]string
	// fetched is the content brought and checked by this fetch.
	fetched map[string]bool
}

// newStaging makes a staging folder for writes into the box's folder t,
// or answers nil where a staged file could not be linked into it: the
// box's folder on a file system of its own (a disk image) is written as
// before, from the host's content.
func (b *Writer) newStaging(t *confined.Beneath, writes []*store.Entry, root bool) (*staging, error) {
	if b.Fetch == nil || len(writes) == 0 {
		return nil, nil
	}
	tmp := b.Path(store.DirTmp)
	var box, st unix.Stat_t
	if err := unix.Fstat(t.Fd, &box); err != nil {
		return nil, err
	}
	if err := unix.Stat(tmp, &st); err != nil || st.Dev != box.Dev {
		return nil, nil
	}
	dir, err := os.MkdirTemp(tmp, "stage-")
	if err != nil {
		return nil, err
	}
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	for i := range stagingFolders {
		if err := unix.Mkdirat(dfd, stagingFolder(int64(i)), 0o700); err != nil {
			unix.Close(dfd)
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
	s := &staging{dir: dir, dfd: dfd, root: root, byHash: make(map[string][]*store.Entry),
		files: make(map[string]string), fetched: make(map[string]bool)}
	for _, e := range writes {
		s.byHash[e.Hash] = append(s.byHash[e.Hash], e)
	}
	return s, nil
}

// stagingFolders is how many folders the staged files are spread over:
// a file made in a folder waits for the others made in it.
const stagingFolders = 64

// stagingFolder is the name of the folder staged file n is made in.
func stagingFolder(n int64) string { return fmt.Sprintf("%02x", n%stagingFolders) }

// put writes data, content hash checked by the fetch, into a staged file
// for each file of the restore that holds it. It is the fetch's sink, run
// from several goroutines at once.
func (s *staging) put(hash string, data []byte) error {
	for _, e := range s.byHash[hash] {
		n := s.n.Add(1)
		name := stagingFolder(n) + "/" + strconv.FormatInt(n, 10)
		if err := s.write(name, e, data); err != nil {
			_ = unix.Unlinkat(s.dfd, name, 0)
			return fmt.Errorf("write %s: %w", e.Path, err)
		}
		s.mu.Lock()
		s.files[e.Path] = name
		s.mu.Unlock()
	}
	s.mu.Lock()
	s.fetched[hash] = true
	s.mu.Unlock()
	return nil
}

// write makes the staged file name holding data, with e's owner (as root),
// mode and times.
func (s *staging) write(name string, e *store.Entry, data []byte) error {
	fd, err := unix.Openat(s.dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	_, err = f.Write(data)
	// A file root makes is root's, in a folder without setgid: only
	// another owner needs a chown.
	if err == nil && s.root && (e.UID != 0 || e.GID != 0) {
		err = f.Chown(int(e.UID), int(e.GID))
	}
	// Chmod after chown: a chown clears setuid and setgid.
	if err == nil {
		err = f.Chmod(e.FileMode())
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// A rename keeps a file's times: they are set here, off the
		// box's folder, while the fetch still waits on the bucket.
		ts := []unix.Timespec{unix.NsecToTimespec(e.ATime), unix.NsecToTimespec(e.MTime)}
		err = unix.UtimesNanoAt(s.dfd, name, ts, unix.AT_SYMLINK_NOFOLLOW)
	}
	return err
}

// wasFetched says whether this fetch brought and checked content hash.
func (s *staging) wasFetched(hash string) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fetched[hash]
}

// stagedFolder is the staged files that go into one folder of the box's
// (dir, "" for its top).
type stagedFolder struct {
	dir   string
	files []stagedFile
}

type stagedFile struct {
	e    *store.Entry
	name string
}

// byFolder sorts writes into the files s holds, by the folder each goes
// into, and the rest (all of writes when s is nil).
func (s *staging) byFolder(writes []*store.Entry) (rest []*store.Entry, folders []stagedFolder) {
	if s == nil {
		return writes, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	at := make(map[string]int)
	for _, e := range writes {
		name, ok := s.files[e.Path]
		if !ok {
			rest = append(rest, e)
			continue
		}
		delete(s.files, e.Path)
		dir, _ := path.Split(e.Path)
		i, ok := at[dir]
		if !ok {
			i = len(folders)
			at[dir] = i
			folders = append(folders, stagedFolder{dir: dir})
		}
		folders[i].files = append(folders[i].files, stagedFile{e, name})
	}
	return rest, folders
}

// close removes the staging folder and whatever it still holds.
func (s *staging) close() {
	if s == nil {
		return
	}
	unix.Close(s.dfd)
	_ = os.RemoveAll(s.dir)
}

// linkIn gives the staged file name its name base in folder, then takes
// it out of the staging folder: a link and an unlink, not a rename, since
// a rename from one folder to another waits on a lock the whole file
// system shares. A path already there (a restore over a file) is
// replaced by a rename within its own folder.
func (s *staging) linkIn(folder *confined.Beneath, name, base string) error {
	err := unix.Linkat(s.dfd, name, folder.Fd, base, 0)
	if errors.Is(err, unix.EEXIST) {
		tmp := ".boxsnap-restore-" + store.RandomSuffix()
		if err = unix.Linkat(s.dfd, name, folder.Fd, tmp, 0); err == nil {
			if err = unix.Renameat(folder.Fd, tmp, folder.Fd, base); err != nil {
				_ = unix.Unlinkat(folder.Fd, tmp, 0)
			}
		}
	}
	if err != nil {
		return err
	}
	return unix.Unlinkat(s.dfd, name, 0)
}

// placeStaged links the staged files of one folder into it, the
// folder opened once beneath the box's folder t through no link, and
// hands put the stat each is left with (its owner, mode and times were
// set when it was written).
func (b *Writer) placeStaged(t *confined.Beneath, s *staging, sf stagedFolder, put func(*store.Entry, *unix.Stat_t)) error {
	folder := t
	if sf.dir != "" {
		var err error
		if folder, err = t.Sub(strings.TrimSuffix(sf.dir, "/")); err != nil {
			return fmt.Errorf("write into %s: %w", sf.dir, err)
		}
		defer folder.Close()
	}
	for _, f := range sf.files {
		base := path.Base(f.e.Path)
		var st unix.Stat_t
		if err := s.linkIn(folder, f.name, base); err != nil {
			return fmt.Errorf("write %s: %w", f.e.Path, err)
		}
		if err := folder.Lstat(base, &st); err != nil {
			return fmt.Errorf("write %s: %w", f.e.Path, err)
		}
		put(f.e, &st)
	}
	return nil
}
