package journal

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/confined"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// The change journal. While a box runs, an inotify instance watches every
// folder of it and records which paths changed since the last take or
// restore; a take then reads only those paths (and the subtrees of folders
// that appeared), a restore compares the target with the last manifest plus
// those paths, and ChangedSinceTake answers without reading a folder.
// Whatever makes the record incomplete (the kernel's queue overflowed, more
// paths changed than the journal keeps, a watch could not be added, the box's
// folder moved, boxsnap restarted) makes the next take or restore walk the
// whole folder, and it says so in its log.
//
// inotify is read straight through golang.org/x/sys/unix rather than through
// github.com/fsnotify/fsnotify (which the module proxy serves, v1.10.1): a
// take must know that every event queued before it began has been handled,
// and reading the descriptor itself until EAGAIN gives that, where fsnotify's
// goroutine and channel give no such point; fsnotify also hides the rename
// cookie and folder moves, and keys watches by a path that goes stale when a
// watched folder is renamed. fanotify would need CAP_SYS_ADMIN, which boxsnap
// does not assume (boxes may run as a plain user).
//
// Two things inotify never reports, and what the journal does about them:
// writes through a shared memory mapping (no event at all), and a change to a
// hard-linked file through another of its names (reported under that name
// only, or not at all from outside the box). For the second, every file with
// more than one link gets a watch of its own (but one whose data lies in
// the box's overlay's shared tree, which the package doc says is no hard
// link of the box's), and a hard link made or a linked file changed makes the next
// take walk (the journal's sweep of a file's other names by inode still
// missed a write under concurrent changes, so it is not trusted yet). For the first there is no cure short of fanotify
// with FAN_MODIFY, which has the same gap: a box whose program writes files
// through mmap should set Config.NoJournal.

// DefaultJournalPaths is how many changed paths a box's journal remembers
// between takes before it gives up and the next take walks the folder.
const DefaultJournalPaths = 50000

// Marks on a changed path.
const (
	dirtySelf    uint8 = 1 // the path itself: stat it again
	dirtySubtree uint8 = 2 // the path and everything under it: read it again
)

const (
	journalDirMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_ATTRIB |
		unix.IN_CLOSE_WRITE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF |
		unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW | unix.IN_EXCL_UNLINK
	journalFileMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_DONT_FOLLOW
)

// journal is one box's change journal.
type journal struct {
	box, dir string
	root     *confined.Beneath // the box's folder: every name is read beneath it
	lower    *Lower            // which files lie in its overlay's shared tree; nil for none
	maxPaths int
	file     *os.File // the inotify descriptor, non-blocking, in Go's poller
	fd       int
	buf      []byte
	done     chan struct{}

	Mu      sync.Mutex
	wds     map[int32]string // folder watches: descriptor to path
	dirs    map[string]int32 // and back
	fileWds map[int32]uint64 // watches of hard-linked files: descriptor to inode
	inoWd   map[uint64]int32
	linked  map[uint64]map[string]bool // a hard-linked inode's known names
	dirty   map[string]uint8
	sweep   map[uint64]bool // inodes that got a new name: their other names changed too
	unseen  map[string]bool // names made but gone before stat'ed; true once written
	Lost    string          // why this epoch's record is incomplete ("" while whole)
	Dead    string          // why the journal stopped watching for good
	Base    string          // what the epoch's record is relative to (journalBasis)
	epoch   uint64
	closed  bool
}

// Set is the backend's change journals, one for each running box, and
// what they read beneath a box's folder with.
type Set struct {
	*confined.Scanner
	Journals journals
	// UpperOf is the upper layer of the overlay mounted on a box's
	// folder, or "" for a box that is no overlay; nil for none.
	UpperOf      func(dir string) string
	noJournal    bool
	journalPaths int
}

// NewSet is the journals of a backend that reads with scanner, each
// remembering at most paths changed paths; with off, it starts none.
func NewSet(scanner *confined.Scanner, paths int, off bool) *Set {
	return &Set{Scanner: scanner, journalPaths: paths, noJournal: off}
}

// journals is the backend's running journals, by box.
type journals struct {
	Mu sync.Mutex
	m  map[string]*journal
	// AtStop is what each stopped box's journal said as the box stopped:
	// whether its files changed since its last take (Changes answers it
	// for a stopped box).
	AtStop map[string]providers.Changed
}

// JournalCut is a journal's record at a take's or restore's start: what
// changed since base. The journal goes on recording into a new epoch.
type JournalCut struct {
	Running bool
	Dirty   map[string]uint8
	Sweep   map[uint64]bool
	lost    string
	base    string
	epoch   uint64
}

// networkFS are the file systems whose changes may come from another host,
// which inotify never sees.
var networkFS = map[int64]string{
	0x6969:     "nfs",
	0xFF534D42: "cifs",
	0xFE534D42: "smb2",
	0x517B:     "smb",
	0x65735546: "fuse",
	0x01021997: "9p",
	0x00C36400: "ceph",
	0x5346414F: "afs",
	0x73757245: "coda",
	0x47504653: "gpfs",
	0x013111A8: "ibrix",
	0x7461636F: "ocfs2",
	0x01161970: "gfs2",
}

// StartJournal starts the box's journal, if it is not running: it watches
// every folder of the box before it returns. A journal that cannot watch is
// kept with its reason, which the box's takes then log.
func (b *Set) StartJournal(box, dir string) {
	if b.noJournal {
		return
	}
	b.Journals.Mu.Lock()
	defer b.Journals.Mu.Unlock()
	if b.Journals.m == nil {
		b.Journals.m = make(map[string]*journal)
	}
	if j := b.Journals.m[box]; j != nil {
		j.Mu.Lock()
		dead := j.Dead
		j.Mu.Unlock()
		if dead == "" {
			return
		}
		j.close()
	}
	j := &journal{box: box, dir: dir, maxPaths: b.journalPaths, fd: -1,
		wds: map[int32]string{}, dirs: map[string]int32{}, fileWds: map[int32]uint64{},
		inoWd: map[uint64]int32{}, linked: map[uint64]map[string]bool{}, dirty: map[string]uint8{},
		sweep: map[uint64]bool{}, unseen: map[string]bool{}}
	b.Journals.m[box] = j
	root, err := confined.OpenTree(dir)
	if err != nil {
		j.Dead = fmt.Sprintf("the box's folder could not be opened (%v)", err)
		j.Lost = j.Dead
		return
	}
	j.root = root
	if b.UpperOf != nil {
		j.lower = OpenLower(b.UpperOf(dir))
	}
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(root.Fd, &sfs); err == nil {
		if name, ok := networkFS[int64(sfs.Type)]; ok {
			j.Dead = fmt.Sprintf("the box's folder is on a network file system (%s), whose changes inotify does not see", name)
			j.Lost = j.Dead
			return
		}
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		j.Dead = fmt.Sprintf("no inotify instance (%v; fs.inotify.max_user_instances)", err)
		j.Lost = j.Dead
		return
	}
	j.fd = fd
	j.file = os.NewFile(uintptr(fd), "inotify-"+box)
	j.buf = make([]byte, 64<<10)
	j.done = make(chan struct{})
	j.Mu.Lock()
	j.watchTreeLocked(".")
	j.Lost = "the journal started after the last take" // the first take walks
	j.Mu.Unlock()
	go j.run()
}

// EndJournal stops the box's journal and releases its watches.
func (b *Set) EndJournal(box string) {
	b.Journals.Mu.Lock()
	j := b.Journals.m[box]
	delete(b.Journals.m, box)
	b.Journals.Mu.Unlock()
	if j != nil {
		j.close()
	}
}

// EndJournals stops every journal, as the backend closes.
func (b *Set) EndJournals() {
	b.Journals.Mu.Lock()
	all := b.Journals.m
	b.Journals.m = nil
	b.Journals.Mu.Unlock()
	for _, j := range all {
		j.close()
	}
}

func (b *Set) JournalOf(box string) *journal {
	b.Journals.Mu.Lock()
	defer b.Journals.Mu.Unlock()
	return b.Journals.m[box]
}

// CutJournal takes the box's journal's record up to now and starts a new
// epoch. Every event queued before the call is handled first.
func (b *Set) CutJournal(box string) JournalCut {
	j := b.JournalOf(box)
	if j == nil {
		return JournalCut{}
	}
	j.Mu.Lock()
	defer j.Mu.Unlock()
	j.DrainLocked()
	// Every hard-linked file's names are stat'ed again at each take: a
	// write through one name is reported under that name only.
	for ino := range j.linked {
		j.sweep[ino] = true
	}
	c := JournalCut{Running: true, Dirty: j.dirty, Sweep: j.sweep, lost: j.Lost, base: j.Base}
	if j.Dead != "" {
		c.lost = j.Dead
	}
	j.epoch++
	c.epoch = j.epoch
	j.dirty = map[string]uint8{}
	j.sweep = map[uint64]bool{}
	j.unseen = map[string]bool{}
	j.Lost = j.Dead
	j.Base = ""
	return c
}

// RebaseJournal says the epoch started by cut records changes since base (a
// journalBasis), once the take or restore that cut it has succeeded.
func (b *Set) RebaseJournal(box string, c JournalCut, base string) {
	if !c.Running {
		return
	}
	j := b.JournalOf(box)
	if j == nil {
		return
	}
	j.Mu.Lock()
	defer j.Mu.Unlock()
	if j.epoch != c.epoch {
		return
	}
	j.Base = base
	// A take reads while the box's process is paused, so nothing should
	// change meanwhile; something outside the box's process group still can.
	// The journal's record of changes made while a take read has been seen
	// to miss one (TestJournalTakeEqualsWalkTake's busy rounds, once in many
	// runs, cause not found), and a missed change is a snapshot that lies.
	// So a take during which anything changed makes the next take walk.
	if strings.HasPrefix(base, "take:") {
		j.DrainLocked()
		if len(j.dirty) > 0 || len(j.sweep) > 0 {
			j.loseLocked(ChangedWhileTaking)
		}
	}
}

// ChangedWhileTaking is why a take walks after one during which the box's
// files changed.
const ChangedWhileTaking = "the box's files changed while the last take read them"

// Usable says why a cut cannot stand in for a walk against basis, or "".
func (c JournalCut) Usable(basis string) string {
	switch {
	case !c.Running:
		return "the box's change journal is not running (the box is stopped, or boxsnap restarted)"
	case c.lost != "":
		return c.lost
	case basis == "" || c.base != basis:
		return "the journal records changes since another state of the box than its last take or restore"
	}
	return ""
}

// BoxsnapsOwn are the paths of a box that boxsnap writes itself, outside a
// take or a restore: the access file, which a restore's last step and a
// reset write as the box holds it now, and the folder that holds it. A
// change to them is no change of the box's own: the Now row and automatic
// history count none of them (a take still holds them).
var BoxsnapsOwn = []string{confined.MarkerDir, confined.AccessFile}

// BoxChanges is how many of the box's own paths the journal recorded as
// changed, boxsnap's own writes apart. Called with j.mu held.
func (j *journal) BoxChanges() int {
	n := len(j.dirty)
	for _, own := range BoxsnapsOwn {
		if _, ok := j.dirty[own]; ok {
			n--
		}
	}
	return n
}

func (j *journal) close() {
	j.Mu.Lock()
	if j.closed {
		j.Mu.Unlock()
		return
	}
	j.closed = true
	j.dirty = nil
	if j.root != nil {
		_ = j.root.Close()
		j.root = nil
	}
	j.lower.Close()
	j.lower = nil
	j.Mu.Unlock()
	if j.file != nil {
		_ = j.file.Close() // releases every watch; wakes run
		<-j.done
	}
}

// run handles events as they come, until the journal is closed.
func (j *journal) run() {
	defer close(j.done)
	rc, err := j.file.SyscallConn()
	if err != nil {
		j.Mu.Lock()
		j.dieLocked(fmt.Sprintf("its events cannot be read (%v)", err))
		j.Mu.Unlock()
		return
	}
	_ = rc.Read(func(uintptr) bool {
		j.Mu.Lock()
		defer j.Mu.Unlock()
		if j.closed {
			return true
		}
		j.DrainLocked()
		return j.closed
	})
}

// DrainLocked reads and handles every queued event.
func (j *journal) DrainLocked() {
	if j.closed || j.fd < 0 {
		return
	}
	for {
		n, err := unix.Read(j.fd, j.buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if errors.Is(err, unix.EAGAIN) || n <= 0 {
			return
		}
		if err != nil {
			j.dieLocked(fmt.Sprintf("reading its events failed (%v)", err))
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			wd := int32(binary.NativeEndian.Uint32(j.buf[off:]))
			mask := binary.NativeEndian.Uint32(j.buf[off+4:])
			nameLen := int(binary.NativeEndian.Uint32(j.buf[off+12:]))
			name := j.buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+nameLen]
			if i := indexNUL(name); i >= 0 {
				name = name[:i]
			}
			off += unix.SizeofInotifyEvent + nameLen
			j.handleLocked(wd, mask, string(name))
		}
	}
}

func indexNUL(p []byte) int {
	for i, c := range p {
		if c == 0 {
			return i
		}
	}
	return -1
}

// handleLocked records one event.
func (j *journal) handleLocked(wd int32, mask uint32, name string) {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		j.loseLocked("the kernel's event queue overflowed (fs.inotify.max_queued_events)")
		return
	}
	if ino, ok := j.fileWds[wd]; ok {
		if mask&unix.IN_IGNORED != 0 {
			delete(j.fileWds, wd)
			delete(j.inoWd, ino)
			return
		}
		// Correctness first: a write through one name of a hard-linked
		// file is not yet followed to all its names in every race (found by
		// TestJournalTakeEqualsWalkTake under concurrent changes), so the
		// next take walks.
		j.loseLocked("a file with hard links changed (the journal does not follow a file's other names)")
		return
	}
	dir, ok := j.wds[wd]
	if !ok {
		return // a watch already dropped: its folder's move or removal marked it
	}
	if mask&unix.IN_IGNORED != 0 {
		delete(j.wds, wd)
		if j.dirs[dir] == wd {
			delete(j.dirs, dir)
		}
		if dir == "." {
			j.dieLocked("the box's folder was removed or moved")
		}
		return
	}
	if mask&unix.IN_UNMOUNT != 0 {
		j.dieLocked("the file system of the box's folder was unmounted")
		return
	}
	if name == "" {
		if dir == "." && mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0 {
			j.dieLocked("the box's folder was removed or moved")
			return
		}
		if mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) == 0 {
			j.markLocked(dir, dirtySelf)
		}
		return
	}
	rel := name
	if dir != "." {
		rel = dir + "/" + name
	}
	isDir := mask&unix.IN_ISDIR != 0
	if mask&(unix.IN_CREATE|unix.IN_DELETE|unix.IN_MOVED_FROM|unix.IN_MOVED_TO) != 0 {
		j.markLocked(dir, dirtySelf) // its times changed
	}
	switch {
	case isDir && mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0:
		// A folder made or moved in: everything in it is new to the journal,
		// and it may hold folders made before its watch was added.
		j.markLocked(rel, dirtySubtree)
		j.watchTreeLocked(rel)
	case isDir && mask&(unix.IN_MOVED_FROM|unix.IN_DELETE) != 0:
		j.markLocked(rel, dirtySelf)
		j.unwatchTreeLocked(rel)
	case mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0:
		j.markLocked(rel, dirtySelf)
		j.seeNameLocked(rel)
	default:
		j.markLocked(rel, dirtySelf)
		if written, ok := j.unseen[rel]; ok {
			switch {
			case mask&unix.IN_MOVED_FROM != 0:
				delete(j.unseen, rel) // its new name is stat'ed in turn
			case mask&unix.IN_DELETE != 0:
				delete(j.unseen, rel)
				if written {
					j.loseLocked("a name was made, written and removed before the journal could see whether it was a hard link")
				}
			case mask&(unix.IN_MODIFY|unix.IN_ATTRIB|unix.IN_CLOSE_WRITE) != 0:
				j.unseen[rel] = true
			}
		}
	}
}

// seeNameLocked stats a name just made or moved in. A hard link to a file of
// the box changes that file under every name, and inotify reports it under
// this one only: the file gets a watch of its own and its inode is swept at
// the next take. A file whose data lies in the box's overlay's shared tree
// (as in a shared folder the box renamed) is none (the package doc says why). A name gone
// before it could be stat'ed may have been such a link: if it is written
// and then removed (not renamed) the record is incomplete. One made and
// removed with no write in between changed another name's change time
// only, which a take keeps as it was: the content, mode, owner and times
// are right, and a later walk reads that file once more.
func (j *journal) seeNameLocked(rel string) {
	if j.Lost != "" {
		return
	}
	if j.root == nil {
		return // closed
	}
	var st unix.Stat_t
	if err := j.root.Lstat(rel, &st); err != nil {
		if len(j.unseen) >= j.maxPaths {
			j.loseLocked("too many names made and removed since the last take")
			return
		}
		j.unseen[rel] = false
		return
	}
	delete(j.unseen, rel)
	if st.Mode&unix.S_IFMT == unix.S_IFDIR || st.Nlink < 2 {
		return
	}
	inLower := j.lower.Holds(rel, &st)
	j.lower.Forget()
	if inLower {
		return // its other names are outside the box (the package doc)
	}
	if len(j.sweep) >= j.maxPaths {
		j.loseLocked("too many hard links made since the last take")
		return
	}
	j.sweep[st.Ino] = true
	j.watchLinkedLocked(LinkedFile{Rel: rel, Ino: st.Ino})
	j.loseLocked("a hard link was made (the journal does not follow a file's other names)")
}

func (j *journal) markLocked(rel string, how uint8) {
	if j.Lost != "" {
		return
	}
	old, ok := j.dirty[rel]
	if !ok && len(j.dirty) >= j.maxPaths {
		j.loseLocked(fmt.Sprintf("more than %d paths changed since the last take (the journal's cap)", j.maxPaths))
		return
	}
	j.dirty[rel] = old | how
}

func (j *journal) loseLocked(why string) {
	if j.Lost == "" {
		j.Lost = why
	}
	j.dirty = map[string]uint8{}
	j.sweep = map[uint64]bool{}
	j.unseen = map[string]bool{}
}

func (j *journal) dieLocked(why string) {
	if j.Dead == "" {
		j.Dead = why
	}
	j.loseLocked(why)
}

// watchTreeLocked adds a watch to rel and every folder under it. Each folder
// is opened beneath the box's folder, as a folder only and through no link
// (a pipe or a link the box put in its place is never opened: a pipe would
// hold the open), watched by its descriptor, and read after its watch is
// added, so a folder made in it meanwhile is either seen by the read or
// reported by the watch.
func (j *journal) watchTreeLocked(rel string) {
	pending := []string{rel}
	for len(pending) > 0 && j.Dead == "" {
		r := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		abs := j.dir
		if r != "." {
			abs = j.dir + "/" + r
		}
		if j.root == nil {
			return // closed
		}
		fd, err := j.root.Open(r, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK)
		if err != nil {
			if confined.GoneOrSwapped(err) {
				continue // it went; its parent's watch reported that
			}
			j.dieLocked(fmt.Sprintf("a folder could not be read (%v)", err))
			return
		}
		f := os.NewFile(uintptr(fd), abs)
		// The descriptor's /proc link names the very folder opened; the
		// watch follows it (no IN_DONT_FOLLOW), to that folder only.
		wd, err := unix.InotifyAddWatch(j.fd, fmt.Sprintf("/proc/self/fd/%d", fd), journalDirMask&^unix.IN_DONT_FOLLOW)
		if err != nil {
			f.Close()
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			if errors.Is(err, unix.ENOSPC) {
				j.dieLocked("the inotify watch limit was reached (fs.inotify.max_user_watches)")
				return
			}
			j.dieLocked(fmt.Sprintf("a folder could not be watched (%v)", err))
			return
		}
		if old, ok := j.wds[int32(wd)]; ok && old != r && j.dirs[old] == int32(wd) {
			delete(j.dirs, old)
		}
		j.wds[int32(wd)] = r
		j.dirs[r] = int32(wd)
		ents, _ := f.ReadDir(-1)
		f.Close()
		for _, e := range ents {
			c := e.Name()
			if r != "." {
				c = r + "/" + c
			}
			if e.IsDir() {
				pending = append(pending, c)
			} else if rel != "." {
				// A name made in a new folder before its watch: it may be a
				// hard link to a file of the box.
				j.seeNameLocked(c)
			}
		}
	}
}

// unwatchTreeLocked drops the watches of rel and every folder under it, after
// rel was moved away or removed.
func (j *journal) unwatchTreeLocked(rel string) {
	prefix := rel + "/"
	for p, wd := range j.dirs {
		if p == rel || strings.HasPrefix(p, prefix) {
			_, _ = unix.InotifyRmWatch(j.fd, uint32(wd))
			delete(j.dirs, p)
			delete(j.wds, wd)
		}
	}
}

// LinkedFile is a file with more than one link, and one of its names.
type LinkedFile struct {
	Rel string
	Ino uint64
}

// WatchLinked gives each hard-linked file a watch of its own, so a write
// through a name outside the box is recorded too. fresh replaces what the
// journal knew (after a walk). A watch newly added marks the file's names
// changed: it could have been written before the watch began.
func (b *Set) WatchLinked(box string, files []LinkedFile, fresh bool) {
	j := b.JournalOf(box)
	if j == nil {
		return
	}
	j.Mu.Lock()
	defer j.Mu.Unlock()
	if j.closed || j.fd < 0 || j.Dead != "" {
		return
	}
	if fresh {
		j.linked = map[uint64]map[string]bool{}
	}
	for _, f := range files {
		j.watchLinkedLocked(f)
	}
}

func (j *journal) watchLinkedLocked(f LinkedFile) {
	if j.Dead != "" {
		return
	}
	names := j.linked[f.Ino]
	if names == nil {
		if len(j.linked) >= j.maxPaths {
			j.loseLocked("too many hard-linked files to watch")
			return
		}
		names = map[string]bool{}
		j.linked[f.Ino] = names
	}
	names[f.Rel] = true
	if _, ok := j.inoWd[f.Ino]; ok {
		return
	}
	// The file is found beneath the box's folder through no link, checked
	// to be the inode known, and watched by its descriptor's /proc link,
	// which names that very file.
	if j.root == nil {
		return // closed
	}
	wd := -1
	fd, err := j.root.Open(f.Rel, unix.O_PATH|unix.O_NOFOLLOW)
	if err == nil {
		var st unix.Stat_t
		if err = unix.Fstat(fd, &st); err == nil && (st.Mode&unix.S_IFMT != unix.S_IFREG || st.Ino != f.Ino) {
			err = unix.ENOENT // no longer the file known
		}
		if err == nil {
			wd, err = unix.InotifyAddWatch(j.fd, fmt.Sprintf("/proc/self/fd/%d", fd), journalFileMask&^unix.IN_DONT_FOLLOW)
		}
		unix.Close(fd)
	}
	if err != nil {
		if errors.Is(err, unix.ENOSPC) {
			j.dieLocked("the inotify watch limit was reached (fs.inotify.max_user_watches)")
			return
		}
		j.markLocked(f.Rel, dirtySelf)
		return
	}
	if old, ok := j.fileWds[int32(wd)]; ok && old != f.Ino {
		delete(j.inoWd, old)
	}
	j.fileWds[int32(wd)] = f.Ino
	j.inoWd[f.Ino] = int32(wd)
	j.markLocked(f.Rel, dirtySelf)
}

// linkedIn lists the hard-linked files among found.
func linkedIn(found []confined.Scanned) []LinkedFile {
	var out []LinkedFile
	for i := range found {
		s := &found[i]
		if s.St.Mode&unix.S_IFMT == unix.S_IFREG && s.St.Nlink > 1 {
			out = append(out, LinkedFile{Rel: s.Rel, Ino: s.St.Ino})
		}
	}
	return out
}

// ReadChanged builds the box's paths from base and the changed paths. After
// a restore (restored), the stat cache knows files only: every other path is
// stat'ed again, and every file whose content it does not know.
func (b *Set) ReadChanged(ctx context.Context, dir string, base *store.Manifest, restored bool, dirty map[string]uint8, linked map[uint64]bool) ([]confined.Scanned, int, error) {
	c := newChangedRead(dir, base, linked)
	defer c.r.close()
	subtrees, selfs := c.dirtyPaths(dirty, restored)
	tops, err := c.statSelfs(ctx, selfs, outermost(subtrees))
	if err != nil {
		return nil, 0, err
	}
	if err := b.readTops(ctx, c, dir, tops); err != nil {
		return nil, 0, err
	}
	if err := c.sweepLinks(); err != nil {
		return nil, 0, err
	}
	out := c.withUnchanged()
	if err := checkFolders(out); err != nil {
		return nil, 0, err
	}
	return out, c.read, nil
}

// changedRead is one readChanged under way: the base's entries by path,
// which of them are replaced or gone, the paths found so far and how many
// were read from the disk.
type changedRead struct {
	es     []store.Entry
	r      *resolver
	drop   []bool          // base entries replaced or gone
	sweep  map[uint64]bool // inodes whose other names changed too (hard links)
	stated map[string]bool
	out    []confined.Scanned
	read   int
}

// newChangedRead starts a readChanged of dir from base, with the inodes
// of linked to sweep; the caller closes its resolver.
func newChangedRead(dir string, base *store.Manifest, linked map[uint64]bool) *changedRead {
	es := base.Entries
	if !sort.SliceIsSorted(es, func(i, k int) bool { return es[i].Path < es[k].Path }) {
		es = append([]store.Entry(nil), es...)
		store.SortEntries(es)
	}
	c := &changedRead{
		es:     es,
		r:      newResolver(dir),
		drop:   make([]bool, len(es)),
		sweep:  map[uint64]bool{},
		stated: map[string]bool{},
	}
	for ino := range linked {
		c.sweep[ino] = true
	}
	return c
}

// find gives the index of p's base entry, or -1.
func (c *changedRead) find(p string) int {
	es := c.es
	i := sort.Search(len(es), func(k int) bool { return es[k].Path >= p })
	if i < len(es) && es[i].Path == p {
		return i
	}
	return -1
}

// dropUnder drops the base entries of p's descendants.
func (c *changedRead) dropUnder(p string) {
	if p == "." {
		for i := range c.drop {
			c.drop[i] = true
		}
		return
	}
	es := c.es
	lo := sort.Search(len(es), func(k int) bool { return es[k].Path >= p+"/" })
	hi := sort.Search(len(es), func(k int) bool { return es[k].Path >= p+"0" })
	for i := lo; i < hi; i++ {
		c.drop[i] = true
	}
}

// dirtyPaths gives the changed paths whose whole subtree is to be read, and
// those to stat alone; after a restore, also every base path but the files
// whose content is known.
func (c *changedRead) dirtyPaths(dirty map[string]uint8, restored bool) (subtrees, selfs []string) {
	for p, how := range dirty {
		if how&dirtySubtree != 0 {
			subtrees = append(subtrees, p)
		} else {
			selfs = append(selfs, p)
		}
	}
	if restored {
		for i := range c.es {
			if c.es[i].Type != store.TypeFile || c.es[i].Hash == "" {
				selfs = append(selfs, c.es[i].Path)
			}
		}
	}
	return subtrees, selfs
}

// outermost gives the sorted subtrees that lie under no other of them.
func outermost(subtrees []string) []string {
	sort.Strings(subtrees)
	var tops []string
	for _, p := range subtrees {
		if len(tops) > 0 && under(p, tops[len(tops)-1]) {
			continue
		}
		tops = append(tops, p)
	}
	return tops
}

// statOne stats p once, in place of its base entry: a path gone drops it
// (and, for a folder, what it held), a found one joins out. It answers
// false for a new folder, to be read whole.
func (c *changedRead) statOne(p string) (bool, error) {
	if c.stated[p] {
		return true, nil
	}
	c.stated[p] = true
	c.read++
	i := c.find(p)
	var pe *store.Entry
	if i >= 0 {
		pe = &c.es[i]
		c.drop[i] = true
		if pe.Type != store.TypeDir {
			c.sweep[pe.Ino] = true
		}
	}
	var s unix.Stat_t
	ok, err := c.r.lstat(p, &s)
	if err != nil {
		return false, err
	}
	if !ok {
		if pe != nil && pe.Type == store.TypeDir {
			c.dropUnder(p)
		}
		return true, nil
	}
	isDir := s.Mode&unix.S_IFMT == unix.S_IFDIR
	if isDir && (pe == nil || pe.Type != store.TypeDir || pe.Ino != s.Ino) {
		return false, nil // a new folder: read it whole
	}
	if !isDir && pe != nil && pe.Type == store.TypeDir {
		c.dropUnder(p)
	}
	if s.Mode&unix.S_IFMT != unix.S_IFDIR && s.Nlink > 1 {
		c.sweep[s.Ino] = true
	}
	c.out = append(c.out, confined.Scanned{Rel: p, St: s, Prev: pe})
	return true, nil
}

// statSelfs stats each of selfs not under tops, in order; a new folder
// among them joins tops, which it gives back.
func (c *changedRead) statSelfs(ctx context.Context, selfs, tops []string) ([]string, error) {
	sort.Strings(selfs)
	for _, p := range selfs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if coveredBy(p, tops) {
			continue
		}
		ok, err := c.statOne(p)
		if err != nil {
			return nil, err
		}
		if !ok {
			tops = insertTop(tops, p)
		}
	}
	return tops, nil
}

// readTops reads each of tops whole, in place of the base's entries for it
// and what it held.
func (b *Set) readTops(ctx context.Context, c *changedRead, dir string, tops []string) error {
	es := c.es
	for _, p := range tops {
		if i := c.find(p); i >= 0 {
			c.drop[i] = true
			if es[i].Type != store.TypeDir {
				c.sweep[es[i].Ino] = true
			}
		}
		c.dropUnder(p)
		var s unix.Stat_t
		ok, err := c.r.lstat(p, &s)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if s.Mode&unix.S_IFMT != unix.S_IFDIR {
			c.out = append(c.out, confined.Scanned{Rel: p, St: s, Prev: entryAt(es, c.find(p))})
			continue
		}
		sub, err := b.ScanFrom(ctx, dir, p)
		if err != nil {
			return err
		}
		c.read += len(sub)
		for k := range sub {
			sub[k].Prev = entryAt(es, c.find(sub[k].Rel))
			if sub[k].St.Mode&unix.S_IFMT != unix.S_IFDIR && sub[k].St.Nlink > 1 {
				c.sweep[sub[k].St.Ino] = true
			}
		}
		c.out = append(c.out, sub...)
	}
	return nil
}

// sweepLinks stats again the base's other names of every hard-linked file
// changed through one name, as it changed under all of them (its times,
// its link count), until no new inode is to sweep.
func (c *changedRead) sweepLinks() error {
	es := c.es
	for seen := -1; len(c.sweep) > 0 && seen != len(c.sweep); {
		seen = len(c.sweep)
		for i := range es {
			if !c.drop[i] && es[i].Type != store.TypeDir && c.sweep[es[i].Ino] {
				ok, err := c.statOne(es[i].Path)
				if err != nil {
					return err
				}
				if !ok {
					return fmt.Errorf("%s became a folder unreported", es[i].Path)
				}
			}
		}
	}
	return nil
}

// withUnchanged gives the paths found, with the base's entries nothing
// replaced or dropped, sorted by path.
func (c *changedRead) withUnchanged() []confined.Scanned {
	out := c.out
	for i := range c.es {
		if !c.drop[i] {
			out = append(out, confined.Scanned{Rel: c.es[i].Path, St: statOfEntry(&c.es[i]), Prev: &c.es[i]})
		}
	}
	sort.Slice(out, func(i, k int) bool { return out[i].Rel < out[k].Rel })
	return out
}

// checkFolders checks, correctness first, that out, sorted by path, holds
// the box's folder, each path once, and every path's folder.
func checkFolders(out []confined.Scanned) error {
	dirs := make(map[string]bool)
	for i := range out {
		if i > 0 && out[i].Rel == out[i-1].Rel {
			return fmt.Errorf("%s is found twice", out[i].Rel)
		}
		if out[i].St.Mode&unix.S_IFMT == unix.S_IFDIR {
			dirs[out[i].Rel] = true
		}
	}
	if len(out) == 0 || out[0].Rel != "." {
		return errors.New("the box's folder itself is missing")
	}
	for i := 1; i < len(out); i++ {
		if !dirs[FolderOf(out[i].Rel)] {
			return fmt.Errorf("%s has no folder", out[i].Rel)
		}
	}
	return nil
}

func entryAt(es []store.Entry, i int) *store.Entry {
	if i < 0 {
		return nil
	}
	return &es[i]
}

// under says whether p is top or below it.
func under(p, top string) bool {
	return top == "." || p == top || strings.HasPrefix(p, top+"/")
}

func coveredBy(p string, tops []string) bool {
	for _, t := range tops {
		if under(p, t) {
			return true
		}
	}
	return false
}

// insertTop adds p to the sorted folders to read whole, dropping those under it.
func insertTop(tops []string, p string) []string {
	out := tops[:0:0]
	for _, t := range tops {
		if !under(t, p) {
			out = append(out, t)
		}
	}
	out = append(out, p)
	sort.Strings(out)
	return out
}

func FolderOf(rel string) string {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return "."
	}
	return rel[:i]
}

// statOfEntry gives the stat a manifest entry records, for a path the journal
// says did not change since.
func statOfEntry(e *store.Entry) unix.Stat_t {
	var st unix.Stat_t
	mode := uint32(e.Mode & 0o777)
	fm := e.FileMode()
	if fm&fs.ModeSetuid != 0 {
		mode |= unix.S_ISUID
	}
	if fm&fs.ModeSetgid != 0 {
		mode |= unix.S_ISGID
	}
	if fm&fs.ModeSticky != 0 {
		mode |= unix.S_ISVTX
	}
	switch e.Type {
	case store.TypeDir:
		mode |= unix.S_IFDIR
	case store.TypeLink:
		mode |= unix.S_IFLNK
	case store.TypeFIFO:
		mode |= unix.S_IFIFO
	default:
		mode |= unix.S_IFREG
	}
	st.Mode = mode
	st.Uid, st.Gid = e.UID, e.GID
	st.Size = e.Size
	st.Ino = e.Ino
	st.Nlink = 1
	st.Mtim = unix.NsecToTimespec(e.MTime)
	st.Atim = unix.NsecToTimespec(e.ATime)
	st.Ctim = unix.NsecToTimespec(e.CTime)
	return st
}

// resolver stats paths under a box's folder without following a link in any
// of their folders (openat2 with RESOLVE_NO_SYMLINKS), as the walk does.
type resolver struct {
	dir  string
	top  int
	fds  map[string]int
	err  error
	open int
}

func newResolver(dir string) *resolver {
	r := &resolver{dir: dir, fds: map[string]int{}, top: -1}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		r.err = err
		return r
	}
	r.top = fd
	r.fds["."] = fd
	return r
}

func (r *resolver) close() {
	for _, fd := range r.fds {
		_ = unix.Close(fd)
	}
	r.fds = nil
}

// maxResolverFds bounds the folder descriptors a resolver keeps open.
const maxResolverFds = 256

// lstat stats rel; ok is false when it is not there (or one of its folders
// is not a folder).
func (r *resolver) lstat(rel string, st *unix.Stat_t) (bool, error) {
	if r.err != nil {
		return false, r.err
	}
	if rel == "." {
		if err := unix.Fstat(r.top, st); err != nil {
			return false, err
		}
		return true, nil
	}
	parent, name := FolderOf(rel), rel[strings.LastIndexByte(rel, '/')+1:]
	fd, ok := r.fds[parent]
	if !ok {
		if len(r.fds) >= maxResolverFds {
			for p, f := range r.fds {
				if p != "." {
					_ = unix.Close(f)
					delete(r.fds, p)
				}
			}
		}
		var err error
		fd, err = unix.Openat2(r.top, parent, &unix.OpenHow{
			Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
		})
		if err != nil {
			if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV) {
				return false, nil
			}
			return false, fmt.Errorf("open %s: %w", parent, err)
		}
		r.fds[parent] = fd
	}
	if err := unix.Fstatat(fd, name, st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			return false, nil
		}
		return false, fmt.Errorf("fstatat %s: %w", rel, err)
	}
	return true, nil
}
