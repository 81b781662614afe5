package browse

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/guestfiles"
	"github.com/boxsnap/boxsnap/providers/local/confined"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// CompareFiles lists what differs between a snapshot and another snapshot,
// or the box's folder now (against nil). Both sides are lists sorted by path
// (a manifest's entries, a scan of the box), walked side by side with no
// index built. Against now, a file whose stat is the one the snapshot (or
// the box's last take or restore) recorded is not read; only files whose
// stat moved and whose size did not are hashed, by the backend's workers.
func (b *Files) CompareFiles(ctx context.Context, ref providers.SnapshotRef, against *providers.SnapshotRef) ([]providers.FileChange, error) {
	m, err := b.LoadUsable(ref)
	if err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	old := sortedEntries(m.Entries)
	if against != nil {
		am, err := b.LoadUsable(*against)
		if err != nil {
			return nil, fmt.Errorf("compare: %w", err)
		}
		return diffSorted(old, sortedEntries(am.Entries)), nil
	}

	guest := m.Guest
	if owner := b.OwnerOf(m); owner != guest.Ref {
		guest = b.GuestOf(owner, m.Guest.Kind) // an imported snapshot's box
	}
	dir, err := b.ExistingBox(guest)
	if err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	found, err := b.ScanTree(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("compare: read box %s: %w", guest.Ref, err)
	}
	// The box's files are read beneath its folder, through no link.
	root, err := confined.OpenTree(dir)
	if err != nil {
		return nil, fmt.Errorf("compare: read box %s: %w", guest.Ref, err)
	}
	defer root.Close()
	now := make([]store.Entry, 0, len(found))
	ids := make([]confined.FileID, 0, len(found)) // which file the scan saw at each path of now
	for i := range found {
		e := store.EntryFromStat(found[i].Rel, &found[i].St)
		if e.Type == "" || hidden(e.Path) {
			continue
		}
		if e.Type == store.TypeLink {
			t, err := root.Readlink(e.Path)
			if err != nil {
				continue // it vanished, or was swapped, while read
			}
			e.Target = t
		}
		now = append(now, e)
		ids = append(ids, confined.FileID{Dev: uint64(found[i].St.Dev), Ino: found[i].St.Ino})
	}
	// Files on both sides with the same size: their hash from a stat that
	// did not move, else from their content.
	var known map[string]*store.Entry
	var toHash []hashJob
	j := 0
	for i := range now {
		ne := &now[i]
		if ne.Type != store.TypeFile {
			continue
		}
		for j < len(old) && old[j].Path < ne.Path {
			j++
		}
		if j >= len(old) || old[j].Path != ne.Path {
			continue // added
		}
		oe := &old[j]
		if oe.Type != store.TypeFile || oe.Size != ne.Size {
			continue // changed by its type or size: no need to read it
		}
		if oe.Key() == ne.Key() {
			ne.Hash = oe.Hash
			continue
		}
		if known == nil {
			k, err := b.KnownIndex(guest.Ref)
			if err != nil {
				return nil, fmt.Errorf("compare: %w", err)
			}
			if known = k; known == nil {
				known = map[string]*store.Entry{}
			}
		}
		if ke := known[ne.Path]; ke != nil && ke.Type == store.TypeFile && ke.Hash != "" && ke.Key() == ne.Key() {
			ne.Hash = ke.Hash
		} else {
			toHash = append(toHash, hashJob{e: ne, id: ids[i]})
		}
	}
	if err := b.hashAll(ctx, root, toHash); err != nil {
		return nil, fmt.Errorf("compare: read box %s: %w", guest.Ref, err)
	}
	return diffSorted(old, now), nil
}

// sortedEntries gives a manifest's entries sorted by path, as a take writes
// them; a copy is sorted only when they are not.
func sortedEntries(es []store.Entry) []store.Entry {
	if sort.SliceIsSorted(es, func(i, j int) bool { return es[i].Path < es[j].Path }) {
		return es
	}
	c := append([]store.Entry(nil), es...)
	store.SortEntries(c)
	return c
}

// hidden reports whether a path is boxsnap's own folder in the box or under
// it: never browsed, never compared.
func hidden(rel string) bool {
	return rel == "." || rel == confined.MarkerDir || strings.HasPrefix(rel, confined.MarkerDir+"/")
}

// hashJob is an entry to hash and the file the scan saw at its path.
type hashJob struct {
	e  *store.Entry
	id confined.FileID
}

// hashAll sets the hash of each entry from the box's file, with the
// backend's workers. A file that vanished, is reached only through a link,
// is no longer a regular file or is another file than the scan saw keeps no
// hash: it changed.
func (b *Files) hashAll(ctx context.Context, root *confined.Beneath, es []hashJob) error {
	if len(es) == 0 {
		return nil
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	ch := make(chan hashJob)
	for w := 0; w < b.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				h, _, err := b.HashBeneath(root, j.e.Path, &j.id)
				if err != nil {
					if errors.Is(err, os.ErrNotExist) {
						continue
					}
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					continue
				}
				j.e.Hash = h
			}
		}()
	}
	for _, e := range es {
		if ctx.Err() != nil {
			break
		}
		ch <- e
	}
	close(ch)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// diffSorted lists the paths that differ between old (the snapshot) and
// cur, both sorted by path, in path order. A folder is listed only when it
// was added or removed, and what an added or removed folder holds is listed
// too. boxsnap's own folder is left out.
func diffSorted(old, cur []store.Entry) []providers.FileChange {
	var out []providers.FileChange
	size := func(e *store.Entry) *int64 {
		if e.Type != store.TypeFile {
			return nil
		}
		v := e.Size
		return &v
	}
	i, j := 0, 0
	for i < len(old) || j < len(cur) {
		switch {
		case j >= len(cur) || (i < len(old) && old[i].Path < cur[j].Path):
			if oe := &old[i]; !hidden(oe.Path) {
				out = append(out, providers.FileChange{Path: oe.Path, Change: providers.ChangeRemoved, Type: changeType(oe.Type), Before: size(oe)})
			}
			i++
		case i >= len(old) || cur[j].Path < old[i].Path:
			if ne := &cur[j]; !hidden(ne.Path) {
				out = append(out, providers.FileChange{Path: ne.Path, Change: providers.ChangeAdded, Type: changeType(ne.Type), After: size(ne)})
			}
			j++
		default:
			oe, ne := &old[i], &cur[j]
			if !hidden(oe.Path) && differs(oe, ne) {
				out = append(out, providers.FileChange{Path: ne.Path, Change: providers.ChangeChanged, Type: changeType(ne.Type), Before: size(oe), After: size(ne)})
			}
			i++
			j++
		}
	}
	return out
}

// differs says whether a path present on both sides changed: its type, a
// link's target, a file's content, or its permission bits. A folder's own
// times are left out: what it holds is listed instead. A current file with
// no hash was not read (its size differs) or vanished: it changed.
func differs(oe, ne *store.Entry) bool {
	if oe.Type != ne.Type {
		return true
	}
	if oe.FileMode() != ne.FileMode() {
		return true
	}
	switch oe.Type {
	case store.TypeLink:
		return oe.Target != ne.Target
	case store.TypeFile:
		return oe.Size != ne.Size || ne.Hash == "" || oe.Hash != ne.Hash
	}
	return false
}

// changeType is a manifest type in FileEntry's words.
func changeType(t string) string {
	switch t {
	case store.TypeFile:
		return "file"
	case store.TypeDir:
		return "dir"
	case store.TypeLink:
		return "link"
	}
	return "other"
}

// OpenFile opens one regular file of a snapshot to be streamed, checking its
// content against its hash as it is read.
func (b *Files) OpenFile(ctx context.Context, ref providers.SnapshotRef, p string) (io.ReadCloser, providers.FileEntry, error) {
	m, err := b.LoadUsable(ref)
	if err != nil {
		return nil, providers.FileEntry{}, fmt.Errorf("download: %w", err)
	}
	rel, err := safeRel(p)
	if err != nil {
		return nil, providers.FileEntry{}, err
	}
	idx, err := b.ManifestIndex(m.ID)
	if err != nil {
		return nil, providers.FileEntry{}, fmt.Errorf("download: %w", err)
	}
	e, err := walkManifest(idx, rel)
	if err != nil {
		return nil, providers.FileEntry{}, err
	}
	if err := guestfiles.FileOnly(rel, "", entryKind(e), e.Target); err != nil {
		return nil, providers.FileEntry{}, err
	}
	f, err := b.OpenContent(ctx, e.Hash, e.Size)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, providers.FileEntry{}, fmt.Errorf("read %s: its content is missing: %w", rel, providers.ErrIncomplete)
	}
	if err != nil {
		return nil, providers.FileEntry{}, fmt.Errorf("read %s: %w", rel, err)
	}
	return &checkedReader{f: f, h: sha256.New(), want: e.Hash, left: e.Size, rel: rel, damaged: func(why string) { b.MarkDamaged(m.ID, why) }}, fileEntry(e), nil
}

// checkedReader reads a content file and checks, at its end, that it is the
// size and hash the snapshot recorded.
type checkedReader struct {
	f       *os.File
	h       hash.Hash
	want    string
	left    int64
	rel     string
	damaged func(why string)
}

func (r *checkedReader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	r.h.Write(p[:n])
	r.left -= int64(n)
	if err == io.EOF {
		if r.left != 0 || hex.EncodeToString(r.h.Sum(nil)) != r.want {
			why := fmt.Sprintf("Its content is damaged on disk: %s does not match its hash", r.rel)
			r.damaged(why)
			return n, fmt.Errorf("read %s: %w: %w", r.rel, store.ErrDamaged, providers.ErrIncomplete)
		}
	}
	return n, err
}

func (r *checkedReader) Close() error { return r.f.Close() }

// WalkFiles calls fn with every entry of a snapshot under dir, dir first,
// in path order (a folder before what it holds), leaving out boxsnap's own
// folder.
func (b *Files) WalkFiles(ctx context.Context, ref providers.SnapshotRef, dir string, fn func(providers.FileEntry) error) error {
	m, err := b.LoadUsable(ref)
	if err != nil {
		return fmt.Errorf("download: %w", err)
	}
	rel, err := safeRel(dir)
	if err != nil {
		return err
	}
	idx, err := b.ManifestIndex(m.ID)
	if err != nil {
		return fmt.Errorf("download: %w", err)
	}
	top, err := walkManifest(idx, rel)
	if err != nil {
		return err
	}
	if top.Type != store.TypeDir {
		return fn(fileEntry(top))
	}
	prefix := rel + "/"
	for i := range m.Entries { // sorted by path: a folder before what it holds
		e := &m.Entries[i]
		if rel != "." && e.Path != rel && !strings.HasPrefix(e.Path, prefix) {
			continue
		}
		if e.Path != "." && hidden(e.Path) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(fileEntry(e)); err != nil {
			return err
		}
	}
	return nil
}
