package capture

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/confined"
	"github.com/boxsnap/boxsnap/providers/local/journal"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// maxCopyAttempts is how many times a take copies a file that changes while
// it is copied before the take fails.
const maxCopyAttempts = 3

// TakeStats is what a capture measured, for the running rates.
type TakeStats struct {
	Files    int
	StatTime time.Duration
	Copied   int64
	CopyTime time.Duration
	Linked   []journal.LinkedFile // files with more than one link, as stat'ed
}

// Capture reads the box's paths into a manifest, copying new content into the
// store: found, from the change journal, or a walk of the folder when found is
// nil. A file whose stat matches its entry in the previous manifest (prev, or
// the journal's own) keeps that entry's hash, when the store holds that
// content; every other file is copied. It answers the content it
// added, so a failed take can collect it.
func (b *Capturer) Capture(ctx context.Context, dir string, prev map[string]*store.Entry, found []confined.Scanned, roomPercent int) (*store.Manifest, []string, TakeStats, error) {
	var stats TakeStats
	m := &store.Manifest{Format: store.ManifestFormat}
	t0 := time.Now()
	held, err := b.openHeld()
	if err != nil {
		return nil, nil, stats, err
	}
	defer held.close()
	// Every read of the box's files goes beneath this descriptor, through
	// no link (package confined).
	root, err := confined.OpenTree(dir)
	if err != nil {
		return nil, nil, stats, fmt.Errorf("read the box's files: %w", err)
	}
	defer root.Close()
	var lower *journal.Lower
	if b.UpperOf != nil {
		lower = journal.OpenLower(b.UpperOf(dir))
		defer lower.Close()
	}
	jobs, need, linked, err := b.readEntries(ctx, root, dir, m, prev, found, held, lower)
	stats.Linked = linked
	stats.Files = len(m.Entries)
	stats.StatTime = time.Since(t0)
	if err != nil {
		return nil, nil, stats, fmt.Errorf("read the box's files: %w", err)
	}

	// The room again, now that the copy's size is known: admission read a
	// plan made before the box was paused.
	if err := b.roomForCopy(need, roomPercent); err != nil {
		return nil, nil, stats, err
	}

	t1 := time.Now()
	// New content is made in a folder of this take's own, in the
	// store's tmp folder, which SpreadFolders marked: its files lie
	// where the file system placed that folder now, away from where
	// files were just removed.
	land := &landing{trees: b.ForksShare != nil && b.ForksShare() && os.Geteuid() == 0, gid: uint32(os.Getegid())}
	if len(jobs) > 0 {
		if land.dir, err = os.MkdirTemp(b.Path(store.DirTmp), "take-"); err != nil {
			return nil, nil, stats, fmt.Errorf("a folder for the take's new content: %w", err)
		}
		defer os.RemoveAll(land.dir)
	}
	added, copied, err := b.copyNew(ctx, root, m, jobs, land)
	stats.Copied = copied
	stats.CopyTime = time.Since(t1)
	if err != nil {
		return nil, added, stats, err
	}
	m.DropVanished()
	return m, added, stats, nil
}

// landing is where and how a capture makes new content: in dir, and,
// where forks share trees here and boxsnap runs as root (trees), a file a
// tree would link (forTrees) with that file's mode and mtime.
type landing struct {
	dir   string
	trees bool
	gid   uint32 // boxsnap's group, a new object's
}

// forTrees says whether the new object copied from a file stat'ed as st
// is made with the file's mode and mtime, the details a shared tree's
// link to it shows (overlay.Links sets them on an object no tree holds
// yet, a chmod and a utimes each): the file is one a tree links, owned by
// root and boxsnap's group, neither setuid, setgid, sticky nor writable
// by its group or others, so the object's owner is already the file's.
// Its bytes and name are the same either way.
func (l *landing) forTrees(st *unix.Stat_t) bool {
	return l.trees && st.Uid == 0 && st.Gid == l.gid && st.Mode&(unix.S_ISUID|unix.S_ISGID|unix.S_ISVTX|0o022) == 0
}

// copyJob is one file a capture copies into the store: its entry's index
// in the manifest, and the file the scan saw, when it stat'ed one.
type copyJob struct {
	idx int
	id  *confined.FileID
}

// heldContent answers whether the store holds a piece of content, asking
// the disk once per piece for one capture.
type heldContent struct {
	b    *Capturer
	dir  int
	seen map[string]bool
}

// openHeld opens the store's content folder for a capture's questions; the
// caller closes it.
func (b *Capturer) openHeld() (*heldContent, error) {
	dir, err := unix.Open(b.Path(store.DirContent), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open the store's content: %w", err)
	}
	return &heldContent{b: b, dir: dir, seen: make(map[string]bool)}, nil
}

// has says whether the store holds content h. A hash is reused only when
// its content is in the store: the take never publishes a name of content
// that is gone, whatever the base it came from (the store lock keeps it
// there until the take publishes; present.go spares the stat of what a
// take found since the last free).
func (h *heldContent) has(hash string) bool {
	ok, seen := h.seen[hash]
	if !seen {
		ok = h.b.ContentHeld(h.dir, hash)
		h.seen[hash] = ok
		if !ok {
			h.b.Log.Warn("local backend: the take copies again a file whose content is not in the store", "content", hash[:min(12, len(hash))])
		}
	}
	return ok
}

// close closes the store's content folder.
func (h *heldContent) close() { unix.Close(h.dir) }

// readEntries reads the box's paths into m's entries: found, or a walk of
// the folder when found is nil. A file keeps its previous entry's hash when
// its stat matches (or, lying in the shared tree, only its change time
// moved: journal.Lower.SameShared) and the store holds the content; every
// other file is a job to copy. It gives the jobs, what their copies hold
// on disk at most, and the files with more than one link, but those whose
// data lies in the box's overlay's lower layer (lower), whose other names
// are outside the box. Sockets, devices and links that vanish while it
// reads are left out.
func (b *Capturer) readEntries(ctx context.Context, root *confined.Beneath, dir string, m *store.Manifest, prev map[string]*store.Entry, found []confined.Scanned, held *heldContent, lower *journal.Lower) (jobs []copyJob, need int64, linked []journal.LinkedFile, err error) {
	if found == nil {
		found, err = b.ScanTree(ctx, dir)
	}
	if b.Hooks.AfterScan != nil {
		b.Hooks.AfterScan()
	}
	if err != nil {
		return nil, 0, nil, err
	}
	m.Entries = make([]store.Entry, 0, len(found))
	for i := range found {
		s := &found[i]
		e := store.EntryFromStat(s.Rel, &s.St)
		pe := s.Prev
		if pe == nil {
			pe = prev[s.Rel]
		}
		switch e.Type {
		case "":
			continue // sockets and devices are left out
		case store.TypeLink:
			// A link's target never changes in place: the same inode
			// and change time is the same target.
			if pe != nil && pe.Type == store.TypeLink && pe.Key() == e.Key() && pe.Target != "" {
				e.Target = pe.Target
				break
			}
			t, lerr := root.Readlink(s.Rel)
			if lerr != nil {
				// Gone, no longer a link (EINVAL: something else was
				// renamed over it), or one of its folders swapped for
				// a link: the box changed it while the take read, as
				// when a file vanishes before its copy.
				if confined.GoneOrSwapped(lerr) || errors.Is(lerr, unix.EINVAL) {
					continue
				}
				return jobs, need, linked, lerr
			}
			e.Target = t
		case store.TypeFile:
			if s.St.Nlink > 1 && !lower.Holds(s.Rel, &s.St) {
				linked = append(linked, journal.LinkedFile{Rel: s.Rel, Ino: s.St.Ino})
			}
			// A shared file whose change time alone moved (another tree
			// linked its content) is not read again.
			same := pe != nil && (pe.Key() == e.Key() || lower.SameShared(pe, &e, &s.St))
			if same && pe.Type == store.TypeFile && pe.Hash != "" && held.has(pe.Hash) {
				e.Hash = pe.Hash
			} else {
				j := copyJob{idx: len(m.Entries)}
				if s.St.Dev != 0 || s.St.Ino != 0 {
					j.id = &confined.FileID{Dev: uint64(s.St.Dev), Ino: s.St.Ino}
				}
				jobs = append(jobs, j)
				need += confined.AllocatedOf(&s.St)
			}
		}
		m.Entries = append(m.Entries, e)
	}
	return jobs, need, linked, nil
}

// copyNew copies the jobs' files into the store with b.Workers at once,
// each made as land says, filling in their entries' hashes and m's
// AddedBytes; the first failure stops the rest. It gives the content it
// added, even on failure, so a failed take can collect it, and the bytes
// it copied.
func (b *Capturer) copyNew(ctx context.Context, root *confined.Beneath, m *store.Manifest, jobs []copyJob, land *landing) (added []string, copied int64, err error) {
	var (
		mu      sync.Mutex
		firstEr error
		wg      sync.WaitGroup
	)
	ch := make(chan copyJob)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for w := 0; w < b.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				e := &m.Entries[j.idx]
				isNew, err := b.copyIn(cctx, root, e, j.id, land)
				mu.Lock()
				if isNew {
					added = append(added, e.Hash)
					m.AddedBytes += e.Size
				}
				if err != nil && firstEr == nil {
					firstEr = fmt.Errorf("%s: %w", e.Path, err)
					cancel()
				}
				if err == nil && e.Type == store.TypeFile {
					copied += e.Size
				}
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		if cctx.Err() != nil {
			break
		}
		ch <- j
	}
	close(ch)
	wg.Wait()
	if firstEr == nil {
		firstEr = ctx.Err()
	}
	return added, copied, firstEr
}

// roomForCopy refuses a take whose copies, need bytes on disk, do not fit in
// the store, or would take it past roomPercent full (0: only when they do not
// fit). The refusal asks to try again: deleting snapshots makes room.
func (b *Capturer) roomForCopy(need int64, roomPercent int) error {
	if need == 0 {
		return nil
	}
	s, err := b.Storage()
	if err != nil {
		return err
	}
	if need > s.FreeBytes {
		return &providers.RefusedError{Why: providers.StoreFullWords(s.FreeBytes, need), TryAgain: true}
	}
	if roomPercent > 0 && s.PercentFull < 100 {
		total := float64(s.FreeBytes) / (1 - s.PercentFull/100)
		if after := s.PercentFull + float64(need)/total*100; after > float64(roomPercent) {
			return &providers.RefusedError{TryAgain: true, Why: fmt.Sprintf(
				"The store would be %.0f%% full with this take's %s, past the %d%% at which new snapshots are refused",
				after, providers.GB(need), roomPercent)}
		}
	}
	return nil
}

// errVanished marks a file that was gone when its content was read.
var errVanished = errors.New("vanished")

// errRetyped marks a file found, when its content was read, to be no longer
// a file (a pipe, a folder): e was set to what is there now.
var errRetyped = errors.New("no longer a file")

// copyIn copies one file's content into the store and sets e's hash and
// stat from what was copied. A file that changes while it is copied, or is
// another file than the one the scan saw (want), is copied again, up to
// maxCopyAttempts; one that vanished is dropped (e.Type = ""); one that is
// no longer a file is taken as what it is now (a pipe, a folder), unread.
func (b *Capturer) copyIn(ctx context.Context, root *confined.Beneath, e *store.Entry, want *confined.FileID, land *landing) (isNew bool, err error) {
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		hash, isNew, err := b.copyOnce(root, e, want, land)
		if errors.Is(err, errVanished) {
			e.Type = ""
			return false, nil
		}
		if errors.Is(err, errRetyped) {
			return false, nil
		}
		if errors.Is(err, errChanged) {
			if attempt < maxCopyAttempts {
				continue
			}
			return false, fmt.Errorf("it kept changing while the take copied it, %d times", maxCopyAttempts)
		}
		if err != nil {
			return false, err
		}
		e.Hash = hash
		b.Present.AddHex(hash) // in the store now, under the take's lock
		return isNew, nil
	}
}

// errChanged marks a file whose stat changed while it was copied.
var errChanged = errors.New("changed while copied")

// copyOnce copies e.Path's content once. The file is opened beneath the box's
// folder with no link followed in any component: one reached only through a
// link (a folder the box swapped for one since the scan) is taken as
// vanished, never read. It is opened non-blocking and checked by its
// descriptor (openRegular): a pipe renamed over the file never holds the
// take, and is taken as the pipe it is now; another file renamed over it
// since the scan (want) is read again, as that file.
func (b *Capturer) copyOnce(root *confined.Beneath, e *store.Entry, want *confined.FileID, land *landing) (string, bool, error) {
	src, before, err := root.OpenRegular(e.Path, want)
	if err != nil {
		switch {
		case confined.GoneOrSwapped(err):
			return "", false, errVanished
		case errors.Is(err, unix.EAGAIN):
			return "", false, errChanged // a rename raced the resolution
		case errors.Is(err, confined.ErrNotRegular):
			*e = store.EntryFromStat(e.Path, &before)
			return "", false, errRetyped
		case errors.Is(err, confined.ErrNotScanned):
			*want = confined.FileID{Dev: uint64(before.Dev), Ino: before.Ino}
			return "", false, errChanged
		}
		return "", false, err
	}
	defer src.Close()
	mode, details := uint32(0o444), land.forTrees(&before)
	if details {
		mode = before.Mode & 0o777
	}
	tmp, tmpName, err := b.newContentFile(land.dir, mode)
	if err != nil {
		return "", false, err
	}
	keep := false
	defer func() {
		tmp.Close()
		if !keep && tmpName != "" {
			_ = os.Remove(tmpName)
		}
	}()
	// Hashed as it is copied: a copy between a box's own file system and
	// the store's reads each byte once.
	hash, n, err := b.CopyHashed(tmp, src, &before)
	if err != nil {
		return "", false, err
	}
	if b.Hooks.AfterCopy != nil {
		// Workers copy side by side; a test's hook runs one at a time.
		b.Hooks.Mu.Lock()
		b.Hooks.AfterCopy(e.Path)
		b.Hooks.Mu.Unlock()
	}
	var after unix.Stat_t
	if err := unix.Fstat(int(src.Fd()), &after); err != nil {
		return "", false, err
	}
	if after.Size != before.Size || after.Mtim != before.Mtim || after.Ctim != before.Ctim {
		return "", false, errChanged
	}
	var now unix.Stat_t
	if err := root.Lstat(e.Path, &now); err != nil {
		return "", false, errVanished
	}
	if n != before.Size {
		return "", false, errChanged
	}
	copiedStat(e, &before)
	dst := b.ContentPath(hash)
	if tmpName == "" && details {
		// Its mtime as a tree shows it, set while it is unnamed; a
		// file whose mtime moved since was copied again above.
		if err := futimens(tmp, before.Mtim); err != nil {
			return "", false, fmt.Errorf("content %s: %w", hash[:12], err)
		}
	}
	if tmpName == "" {
		// An unnamed file (O_TMPFILE) gets its one name: no rename, and
		// nothing left behind if the take stops before. Content the store
		// holds already is the link's EEXIST.
		err := unix.Linkat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", tmp.Fd()), unix.AT_FDCWD, dst, unix.AT_SYMLINK_FOLLOW)
		if errors.Is(err, unix.EEXIST) {
			return hash, false, nil
		}
		if err != nil {
			return "", false, fmt.Errorf("name content %s: %w", hash[:12], err)
		}
		b.noteWritten(hash, tmp)
		return hash, true, nil
	}
	if _, err := os.Lstat(dst); err == nil {
		return hash, false, nil
	}
	if err := tmp.Chmod(0o444); err != nil {
		return "", false, err
	}
	if err := os.Rename(tmpName, dst); err != nil {
		return "", false, err
	}
	keep = true
	b.noteWritten(hash, tmp)
	return hash, true, nil
}

// copiedStat gives e the stat of the file it copied, st.
func copiedStat(e *store.Entry, st *unix.Stat_t) {
	e.Size = st.Size
	e.MTime = st.Mtim.Nano()
	e.ATime = st.Atim.Nano()
	e.CTime = st.Ctim.Nano()
	e.Ino = st.Ino
	e.Mode = uint32(store.FileModeOf(st.Mode))
	e.UID, e.GID = st.Uid, st.Gid
}

// noteWritten notes the stat of a content object this take just wrote
// and named, whose bytes it hashed (content.Copier.NoteChecked), so the
// first shared tree to link it need not read it again.
func (b *Capturer) noteWritten(hash string, f *os.File) {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) == nil {
		b.NoteChecked(hash, &st)
	}
}

// futimens sets f's mtime to mtime, leaving its atime.
func futimens(f *os.File, mtime unix.Timespec) error {
	ts := [2]unix.Timespec{{Nsec: unix.UTIME_OMIT}, mtime}
	// utimensat with no path sets the times of the descriptor's file.
	_, _, errno := unix.Syscall6(unix.SYS_UTIMENSAT, f.Fd(), 0, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// newContentFile opens a file for new content in dir, a folder of the
// store's tmp: unnamed (O_TMPFILE) with mode where the file system allows
// it, else a named temporary file (its name answered), made read-only
// once whole.
func (b *Capturer) newContentFile(dir string, mode uint32) (*os.File, string, error) {
	if !b.noTmpfile.Load() {
		fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, mode)
		if err == nil {
			return os.NewFile(uintptr(fd), "content"), "", nil
		}
		if !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EINVAL) {
			return nil, "", fmt.Errorf("new content file: %w", err)
		}
		b.noTmpfile.Store(true)
	}
	f, err := os.CreateTemp(dir, "c-")
	if err != nil {
		return nil, "", err
	}
	return f, f.Name(), nil
}

// Publish writes the snapshot's folder under a temporary name, with its
// manifest and label, after the content it names is on disk, then renames it
// into place: a snapshot is never half-published.
func (b *Capturer) Publish(ctx context.Context, m *store.Manifest, lab store.Label) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	tmp := b.Path(store.DirSnapshots, store.TakingPrefix+m.ID+"-"+store.RandomSuffix())
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			_ = os.RemoveAll(tmp)
		}
	}()
	mdata, err := store.EncodeChecked(m)
	if err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	ldata, err := store.EncodeChecked(lab)
	if err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, store.FileManifest), mdata, 0o600); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, store.FileLabel), ldata, 0o600); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	if b.Unshipped {
		if err := os.WriteFile(filepath.Join(tmp, store.FileUnshipped), nil, 0o600); err != nil {
			return fmt.Errorf("publish: %w", err)
		}
	}
	// One syncfs puts the content, the manifest and the label on disk before
	// the rename publishes them.
	if err := b.SyncContent(); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	if err := os.Rename(tmp, b.SnapDir(m.ID)); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	ok = true
	if b.NoSync {
		return nil
	}
	return store.SyncDir(b.Path(store.DirSnapshots))
}

// SyncContent flushes the store's file system once (syncfs), so the content a
// manifest names is on disk before the manifest is: one call, not one fsync a
// file.
func (b *Capturer) SyncContent() error {
	if b.NoSync {
		return nil
	}
	return store.SyncFS(b.Root)
}

// fsType names a file system by its statfs magic number, for Storage.Type.
func fsType(magic int64) string {
	switch magic {
	case 0xEF53:
		return "ext4"
	case 0x58465342:
		return "xfs"
	case 0x9123683E:
		return "btrfs"
	case 0x01021994:
		return "tmpfs"
	case 0x794C7630:
		return "overlay"
	case 0x2FC12FC2:
		return "zfs"
	case 0x6969:
		return "nfs"
	}
	return fmt.Sprintf("0x%x", magic)
}

// Storage reads the store's file system: how full it is, in bytes and in
// inodes (every content file is one).
func (b *Capturer) Storage() (providers.Storage, error) {
	var s unix.Statfs_t
	if err := unix.Statfs(b.Root, &s); err != nil {
		return providers.Storage{}, fmt.Errorf("read the store's file system: %w", err)
	}
	r := providers.RoomOfStatfs(&s)
	out := providers.Storage{Name: b.Root, Type: fsType(int64(s.Type)), FreeBytes: r.Free, PercentFull: r.PercentFull()}
	if s.Files > 0 {
		pct := float64(s.Files-s.Ffree) * 100 / float64(s.Files)
		out.MetadataPercentFull = &pct
	}
	return out, nil
}
