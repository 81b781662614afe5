package apply

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/confined"
	"github.com/boxsnap/boxsnap/providers/local/content"
	"github.com/boxsnap/boxsnap/providers/local/diskimage"
	"github.com/boxsnap/boxsnap/providers/local/journal"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// Writer writes snapshots' content into boxes' folders and copies
// templates into new ones, on Workers files at once.
type Writer struct {
	*store.Store
	*content.Copier
	*confined.Scanner
	Log     *slog.Logger
	Workers int
	// Templates is the folder a template's name is found in
	// (Config.Templates); "" when none is set.
	Templates string
	// ExistingBox checks a guest's folder is there and gives its path.
	ExistingBox func(guest providers.Guest) (string, error)
	// Fetch brings the content (hash to size) this host lacks from the
	// content store, each object checked, and hands sink (when not nil)
	// each piece it brings whole, checked, as it comes, keeping it in the
	// host's content too unless keep is false; nil where there is no
	// content store.
	Fetch func(ctx context.Context, need map[string]int64, sink func(hash string, data []byte) error, keep bool) error
}

// MarkDamaged records damage found in a snapshot's content, so HeldSnapshots
// reports it incomplete from then on.
func (b *Writer) MarkDamaged(id, why string) {
	b.Present.Forget()
	b.ForgetChecked()
	if err := store.WriteFileAtomic(filepath.Join(b.SnapDir(id), store.FileDamaged), []byte(why+"\n"), 0o600); err != nil {
		b.Log.Warn("local backend: could not mark a damaged snapshot", "snapshot", id, "err", err)
	}
}

// ApplyResult counts what apply changed, and gives the stat of every file
// as apply left it, for the stat cache.
type ApplyResult struct {
	Written, Removed, Meta int
	Keys                   map[string]store.StatKey
}

// current is one path found in the folder before a restore, and what the
// journal's manifest knew of it.
type current struct {
	mode fs.FileMode
	st   unix.Stat_t
	prev *store.Entry
}

// Apply brings dir to exactly m: it removes what m lacks, rewrites only the
// files whose content differs, and puts back the details of every path that
// differs or that it changed. It checks all the content it will write against
// its hash before it changes anything. found is the folder's paths from the
// change journal; nil walks the folder.
//
// Every change is made beneath dir with no link followed (beneath), and a
// manifest with an entry that could lead out of the folder (checkEntries)
// is refused before anything changes: a restore runs as root, and neither a
// manifest nor what the box's process made of its folder may lead it to
// write on the host.
func (b *Writer) Apply(ctx context.Context, dir string, m *store.Manifest, known map[string]*store.Entry, found []confined.Scanned) (ApplyResult, error) {
	return b.apply(ctx, dir, m, known, found, true)
}

// ApplyNew is Apply into a new box's folder (a fork's): the content it
// fetches is written once, in the box's files, and not kept in the host's
// content as well, since no take of the new box reuses it (each of its
// files is a new inode, read whole at its first take).
func (b *Writer) ApplyNew(ctx context.Context, dir string, m *store.Manifest) (ApplyResult, error) {
	return b.apply(ctx, dir, m, nil, nil, false)
}

// apply is Apply; keep says whether content fetched for files written from
// a staging is kept in the host's content too.
func (b *Writer) apply(ctx context.Context, dir string, m *store.Manifest, known map[string]*store.Entry, found []confined.Scanned, keep bool) (ApplyResult, error) {
	var res ApplyResult
	if err := confined.CheckEntries(m.Entries); err != nil {
		return res, &providers.RefusedError{Why: fmt.Sprintf("Snapshot %s cannot be restored: %v. Nothing was changed.", m.ID, err)}
	}
	ents := inFolderOrder(m.Entries)
	start := time.Now()
	t, err := confined.OpenTree(dir)
	if err != nil {
		return res, fmt.Errorf("open the box's folder: %w", err)
	}
	defer t.Close()
	cur, err := b.currentPaths(ctx, dir, found)
	if err != nil {
		return res, err
	}
	removals, err := removalsFor(cur, m.ByPath())
	if err != nil {
		return res, err
	}
	writes, metas, err := b.filesToWrite(ctx, t, m, cur, known)
	if err != nil {
		return res, err
	}
	planned := time.Now()
	root := os.Geteuid() == 0
	stage, err := b.newStaging(t, writes, root)
	if err != nil {
		return res, err
	}
	defer stage.close()
	if err := b.checkContent(ctx, m, writes, stage, keep); err != nil {
		return res, err
	}
	checked := time.Now()

	// Now change the folder.
	// touched is the folders whose times this restore changes, by writing in
	// them: their details are put back.
	touched := make(map[string]bool)
	removed, err := removePaths(t, removals, touched)
	if err != nil {
		return res, err
	}
	res.Removed = len(removed)
	relinked := forgetRemoved(cur, removed, writes)
	made, err := b.makeNonFiles(ctx, t, ents, cur, touched, root)
	if err != nil {
		return res, err
	}
	res.Written += made
	res.Keys = make(map[string]store.StatKey, len(m.Entries))
	if err := b.writeFiles(ctx, t, writes, stage, root, res.Keys); err != nil {
		return res, err
	}
	res.Written += len(writes)
	for _, e := range writes {
		touched[journal.FolderOf(e.Path)] = true
	}
	res.Meta, err = putFileDetails(t, metas, cur, relinked, root, res.Keys)
	if err != nil {
		return res, err
	}
	if err := b.putFolderDetails(ctx, t, ents, cur, touched, root); err != nil {
		return res, err
	}
	b.Log.Debug("local backend: applied a snapshot", "snapshot", m.ID, "files", len(writes),
		"plan", planned.Sub(start), "check", checked.Sub(planned), "write", time.Since(checked))
	return res, nil
}

// inFolderOrder gives ents in an order where a folder comes before what it
// holds: the manifest's order, which is by path, unless a manifest from
// elsewhere has another, when it is a sorted copy.
func inFolderOrder(ents []store.Entry) []store.Entry {
	if !sort.SliceIsSorted(ents, func(i, j int) bool { return ents[i].Path < ents[j].Path }) {
		ents = slices.Clone(ents)
		store.SortEntries(ents)
	}
	return ents
}

// currentPaths gives every path in dir now, by its path relative to dir:
// from found, the change journal's paths, or, when found is nil, from a
// walk of the folder.
func (b *Writer) currentPaths(ctx context.Context, dir string, found []confined.Scanned) (map[string]current, error) {
	if found == nil {
		var err error
		found, err = b.ScanTree(ctx, dir)
		if err != nil {
			return nil, fmt.Errorf("read the box's files: %w", err)
		}
	}
	cur := make(map[string]current, len(found))
	for i := range found {
		cur[found[i].Rel] = current{mode: found[i].Mode(), st: found[i].St, prev: found[i].Prev}
	}
	return cur, nil
}

// removalsFor gives what goes, sorted: the paths in cur that target lacks,
// or holds as another type. It refuses a folder whose root is not a folder.
func removalsFor(cur map[string]current, target map[string]*store.Entry) ([]string, error) {
	var removals []string
	for rel, c := range cur {
		t := target[rel]
		if t == nil || t.Type != typeOfMode(c.mode) {
			if rel == "." {
				return nil, errors.New("the box's folder is not a folder")
			}
			removals = append(removals, rel)
		}
	}
	sort.Strings(removals)
	return removals, nil
}

// filesToWrite sorts m's files into those whose content must be written and
// those that only need their details put back. A file of the same size whose
// content neither the journal nor known vouches for is hashed in the folder.
func (b *Writer) filesToWrite(ctx context.Context, t *confined.Beneath, m *store.Manifest, cur map[string]current, known map[string]*store.Entry) (writes, metas []*store.Entry, err error) {
	var checks []*store.Entry
	for i := range m.Entries {
		e := &m.Entries[i]
		if e.Type != store.TypeFile {
			continue
		}
		c, ok := cur[e.Path]
		if !ok || typeOfMode(c.mode) != store.TypeFile || c.st.Size != e.Size {
			writes = append(writes, e)
			continue
		}
		k := c.prev
		if k == nil {
			k = known[e.Path]
		}
		if k != nil && k.Type == store.TypeFile && k.Key() == store.KeyOf(&c.st) && k.Hash != "" {
			if k.Hash == e.Hash {
				metas = append(metas, e)
			} else {
				writes = append(writes, e)
			}
			continue
		}
		checks = append(checks, e) // a suspect: same size, unknown content
	}
	var mu sync.Mutex
	err = b.Parallel(ctx, len(checks), func(i int) error {
		e := checks[i]
		h, err := b.hashIn(t, e.Path)
		mu.Lock()
		defer mu.Unlock()
		if err == nil && h == e.Hash {
			metas = append(metas, e)
		} else {
			writes = append(writes, e)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return writes, metas, nil
}

// checkContent checks every piece of content to write against its hash and
// size, before anything changes: what this host lacks is fetched (into
// stage, when there is one, as it comes), each piece checked as it comes;
// what it holds is read and hashed, but for an object whose stat is
// unmoved since this process wrote it from bytes it checked (the fetch
// just now, or a take: Checked), as any write to it would have moved its
// change time. Damaged content marks the snapshot damaged and refuses the
// restore, nothing changed.
func (b *Writer) checkContent(ctx context.Context, m *store.Manifest, writes []*store.Entry, stage *staging, keep bool) error {
	need := make(map[string]int64)
	for _, e := range writes {
		need[e.Hash] = e.Size
	}
	start := time.Now()
	if err := b.fetch(ctx, m, need, stage, keep); err != nil {
		return err
	}
	b.Log.Debug("local backend: fetched a snapshot's content", "snapshot", m.ID, "took", time.Since(start))
	hashes := make([]string, 0, len(need))
	for h := range need {
		if !stage.wasFetched(h) {
			hashes = append(hashes, h)
		}
	}
	err := b.Parallel(ctx, len(hashes), func(i int) error {
		h := hashes[i]
		var st unix.Stat_t
		if unix.Lstat(b.ContentPath(h), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG &&
			st.Size == need[h] && b.Checked(h, &st) {
			return nil
		}
		got, n, err := b.HashPath(b.ContentPath(h))
		if err != nil {
			return fmt.Errorf("%w: content %s is unreadable (%v)", store.ErrDamaged, h[:12], err)
		}
		if got != h || n != need[h] {
			return fmt.Errorf("%w: content %s does not match its hash", store.ErrDamaged, h[:12])
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, store.ErrDamaged) {
			why := "Its content is damaged on disk: " + err.Error()
			b.MarkDamaged(m.ID, why)
			return &providers.RefusedError{Why: fmt.Sprintf("Snapshot %s cannot be restored: %s. Nothing was changed.", m.ID, err)}
		}
		return err
	}
	return nil
}

// removePaths removes removals from the folder, first of the changes,
// deepest paths under their removed folder going with it, and marks each
// one's folder touched. It gives the paths it removed.
func removePaths(t *confined.Beneath, removals []string, touched map[string]bool) (map[string]bool, error) {
	removed := make(map[string]bool, len(removals))
	for _, rel := range removals {
		if underRemoved(rel, removed) {
			continue
		}
		if err := t.RemoveAll(rel); err != nil {
			return removed, fmt.Errorf("remove %s: %w", rel, err)
		}
		removed[rel] = true
		touched[journal.FolderOf(rel)] = true
	}
	return removed, nil
}

// forgetRemoved takes out of cur what the removed paths took with them, and
// gives the inodes whose stat must be read again: a hard-linked file loses a
// link when another of its names goes or is written over, and its change
// time moves.
func forgetRemoved(cur map[string]current, removed map[string]bool, writes []*store.Entry) map[uint64]bool {
	relinked := make(map[uint64]bool)
	for rel, c := range cur {
		if removed[rel] || underRemoved(rel, removed) {
			if !c.mode.IsDir() {
				relinked[c.st.Ino] = true
			}
			delete(cur, rel)
		}
	}
	for _, e := range writes {
		if c, ok := cur[e.Path]; ok {
			relinked[c.st.Ino] = true
		}
	}
	return relinked
}

// writeFiles writes the content and details of writes, in parallel, and
// puts the stat each is left with in keys: the files stage holds are
// renamed into place, a folder at a time, and any other is copied from
// the host's content.
func (b *Writer) writeFiles(ctx context.Context, t *confined.Beneath, writes []*store.Entry, stage *staging, root bool, keys map[string]store.StatKey) error {
	var mu sync.Mutex
	put := func(e *store.Entry, st *unix.Stat_t) {
		mu.Lock()
		keys[e.Path] = store.KeyOf(st)
		mu.Unlock()
	}
	rest, folders := stage.byFolder(writes)
	err := b.Parallel(ctx, len(folders), func(i int) error {
		return b.placeStaged(t, stage, folders[i], put)
	})
	if err != nil {
		return err
	}
	return b.Parallel(ctx, len(rest), func(i int) error {
		e := rest[i]
		st, err := b.writeFile(t, e.Path, b.openContent(e.Hash), e, root)
		if err != nil {
			return fmt.Errorf("write %s: %w", e.Path, err)
		}
		put(e, &st)
		return nil
	})
}

// putFileDetails puts back the details of the files whose content is as
// the snapshot has it where they differ, and puts the stat each is left
// with in keys (read again when it changed or was relinked). It gives how
// many it changed.
func putFileDetails(t *confined.Beneath, metas []*store.Entry, cur map[string]current, relinked map[uint64]bool, root bool, keys map[string]store.StatKey) (int, error) {
	changedN := 0
	for _, e := range metas {
		c := cur[e.Path]
		changed, err := setMetaIfDiffers(t, e, root, &c)
		if err != nil {
			return changedN, err
		}
		if changed {
			changedN++
			var st unix.Stat_t
			if t.Lstat(e.Path, &st) == nil {
				keys[e.Path] = store.KeyOf(&st)
			}
		} else {
			keys[e.Path] = store.KeyOf(&c.st)
			var st unix.Stat_t
			if relinked[c.st.Ino] && t.Lstat(e.Path, &st) == nil {
				keys[e.Path] = store.KeyOf(&st)
			}
		}
	}
	return changedN, nil
}

func typeOfMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return store.TypeDir
	case m&fs.ModeSymlink != 0:
		return store.TypeLink
	case m&fs.ModeNamedPipe != 0:
		return store.TypeFIFO
	case m.IsRegular():
		return store.TypeFile
	}
	return "other"
}

// openContent opens the store's content file named hash, for writeFile.
func (b *Writer) openContent(hash string) func() (*os.File, error) {
	return func() (*os.File, error) { return os.Open(b.ContentPath(hash)) }
}

// writeFile writes the file rel beneath t from what open gives, through a
// temporary file in the same folder, with its details, then renames it into
// place. It gives the file's stat as it leaves it.
func (b *Writer) writeFile(t *confined.Beneath, rel string, open func() (*os.File, error), e *store.Entry, root bool) (unix.Stat_t, error) {
	var st unix.Stat_t
	in, err := open()
	if err != nil {
		return st, err
	}
	defer in.Close()
	// The file's folder, opened once beneath the box's: the temporary file,
	// the rename, the times and the stat are all by name in it.
	dir, name := path.Split(rel)
	var folder *confined.Beneath
	if dir == "" {
		folder = t
	} else if folder, err = t.Sub(strings.TrimSuffix(dir, "/")); err != nil {
		return st, err
	} else {
		defer folder.Close()
	}
	tmp := ".boxsnap-restore-" + store.RandomSuffix()
	out, err := folder.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return st, err
	}
	ok := false
	defer func() {
		if !ok {
			out.Close()
			_ = folder.Remove(tmp)
		}
	}()
	if err := b.CopyData(out, in); err != nil {
		return st, err
	}
	if root {
		if err := out.Chown(int(e.UID), int(e.GID)); err != nil {
			return st, err
		}
	}
	// Chmod after chown: a chown clears setuid and setgid.
	if err := out.Chmod(e.FileMode()); err != nil {
		return st, err
	}
	if err := out.Close(); err != nil {
		return st, err
	}
	if err := folder.Rename(tmp, name); err != nil {
		return st, err
	}
	ok = true
	if err := folder.Lutimes(name, e.ATime, e.MTime); err != nil {
		return st, fmt.Errorf("set the times of %s: %w", e.Path, err)
	}
	if err := folder.Lstat(name, &st); err != nil {
		return st, err
	}
	return st, nil
}

// setMeta puts back a path's owner (as root), mode (not for links) and
// times, beneath t: a restore runs as root, and a box's folder is its
// process's to change, so a link put where a folder was must never lead a
// chmod or a chown out to the host's files.
func setMeta(t *confined.Beneath, e *store.Entry, root bool) error {
	return setMetaAt(t, e.Path, e, root)
}

// setMetaAt is setMeta of e at rel beneath t: e.Path's name in its
// folder, opened as t.
func setMetaAt(t *confined.Beneath, rel string, e *store.Entry, root bool) error {
	if root {
		if err := t.Lchown(rel, int(e.UID), int(e.GID)); err != nil {
			return fmt.Errorf("set the owner of %s: %w", e.Path, err)
		}
	}
	if e.Type != store.TypeLink {
		if err := t.Chmod(rel, e.FileMode()); err != nil {
			return fmt.Errorf("set the mode of %s: %w", e.Path, err)
		}
	}
	if err := t.Lutimes(rel, e.ATime, e.MTime); err != nil {
		return fmt.Errorf("set the times of %s: %w", e.Path, err)
	}
	return nil
}

// setMetaIfDiffers puts back a file's details where they differ from c.
func setMetaIfDiffers(t *confined.Beneath, e *store.Entry, root bool, c *current) (bool, error) {
	same := store.FileModeOf(c.st.Mode) == e.FileMode() && c.st.Mtim.Nano() == e.MTime &&
		(!root || (c.st.Uid == e.UID && c.st.Gid == e.GID))
	if same {
		return false, nil
	}
	return true, setMeta(t, e, root)
}

// hashIn hashes the file rel beneath t, never through a link. O_NONBLOCK:
// a pipe the box put in the file's place since it was read must not hold
// the restore; only a regular file is read.
func (b *Writer) hashIn(t *confined.Beneath, rel string) (string, error) {
	f, err := t.OpenFile(rel, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is no longer a file", rel)
	}
	h, _, err := b.HashFile(f)
	return h, err
}

// Parallel runs fn for 0..n-1 on the backend's workers, stopping at the
// first error.
func (b *Writer) Parallel(ctx context.Context, n int, fn func(i int) error) error {
	if n == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	ch := make(chan int)
	for w := 0; w < b.Workers && w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ch {
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
						cancel()
					}
					mu.Unlock()
				}
			}
		}()
	}
loop:
	for i := 0; i < n; i++ {
		select {
		case ch <- i:
		case <-ctx.Done():
			break loop
		}
	}
	close(ch)
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// CopyTree copies a template folder to a new box folder (made, or empty),
// with its details;
// links are copied as links, never followed. The template's files are read
// beneath its folder as a box's are: through no link, non-blocking, and
// only the regular file the scan saw.
func (b *Writer) CopyTree(ctx context.Context, src, dst string) error {
	from, err := confined.OpenTree(src)
	if err != nil {
		return err
	}
	defer from.Close()
	var top unix.Stat_t
	if err := from.Lstat(".", &top); err != nil {
		return err
	}
	if top.Mode&unix.S_IFMT != unix.S_IFDIR {
		return fmt.Errorf("%s is not a folder", src)
	}
	// A box's folder that is its own file system is made (and mounted)
	// before: an empty folder there is written into.
	if err := os.Mkdir(dst, 0o700); err != nil && !(errors.Is(err, fs.ErrExist) && emptyFolder(dst)) {
		return err
	}
	t, err := confined.OpenTree(dst)
	if err != nil {
		return err
	}
	defer t.Close()
	root := os.Geteuid() == 0
	var dirs []store.Entry
	var files []store.Entry
	var ids []confined.FileID
	found, err := b.ScanTree(ctx, src)
	if err != nil {
		return err
	}
	if err := diskimage.MakeRoomIn(dst, confined.TreeBytes(found)); err != nil {
		return err
	}
	for i := range found {
		rel := found[i].Rel
		e := store.EntryFromStat(rel, &found[i].St)
		switch e.Type {
		case store.TypeDir:
			if rel != "." {
				if err := t.Mkdir(rel, 0o700); err != nil {
					return err
				}
			}
			dirs = append(dirs, e)
		case store.TypeLink:
			target, err := from.Readlink(rel)
			if err != nil {
				return err
			}
			if err := t.Symlink(target, rel); err != nil {
				return err
			}
			e.Target = target
			if err := setMeta(t, &e, root); err != nil {
				return err
			}
		case store.TypeFile:
			files = append(files, e)
			ids = append(ids, confined.FileID{Dev: uint64(found[i].St.Dev), Ino: found[i].St.Ino})
		}
	}
	err = b.Parallel(ctx, len(files), func(i int) error {
		e := &files[i]
		_, err := b.writeFile(t, e.Path, func() (*os.File, error) {
			f, _, err := from.OpenRegular(e.Path, &ids[i])
			if err != nil {
				return nil, fmt.Errorf("the template's %s changed while it was copied: %w", e.Path, err)
			}
			return f, nil
		}, e, root)
		return err
	})
	if err != nil {
		return err
	}
	sort.SliceStable(dirs, func(i, j int) bool { return store.Depth(dirs[i].Path) > store.Depth(dirs[j].Path) })
	for i := range dirs {
		if err := setMeta(t, &dirs[i], root); err != nil {
			return err
		}
	}
	return nil
}

// underRemoved says whether one of rel's folders was removed.
func underRemoved(rel string, removed map[string]bool) bool {
	for {
		i := strings.LastIndexByte(rel, '/')
		if i < 0 {
			return false
		}
		rel = rel[:i]
		if removed[rel] {
			return true
		}
	}
}

// emptyFolder says whether dir is a folder (reached through no link) with
// nothing in it.
func emptyFolder(dir string) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	ents, err := os.ReadDir(dir)
	return err == nil && len(ents) == 0
}
