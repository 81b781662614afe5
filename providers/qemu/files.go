package qemu

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/guestfiles"
)

// A snapshot's files are its guest's root file system as the snapshot's
// disk holds it (look.go makes the copy, debugfs.go reads it). Paths are the
// guest's, relative to its top folder ("" or "." is "/"). The rules are
// package guestfiles', which Docker's look keeps too: a caller's path that
// climbs with ".." is refused; each folder on the way must be a folder and
// not a link; a link is shown as stored and never followed; anything
// neither a file, a folder nor a link is "other" and never read. Here each
// folder's entries are read by inode from the image, never through a path
// on the host.

var _ providers.Browser = (*Backend)(nil)

// entry is one path of a look, with its inode.
type entry struct {
	providers.FileEntry
	n inode
}

// entryOf makes the FileEntry of inode n at rel, reading a link's target.
func entryOf(ctx context.Context, img fsImage, rel string, n inode) (entry, error) {
	e := entry{FileEntry: providers.FileEntry{Path: rel, Type: n.kind(), Mode: n.perm(), ModTime: n.mtime}, n: n}
	switch e.Type {
	case "file":
		e.Size = n.size
	case "link":
		t, err := img.linkTarget(ctx, n)
		if err != nil {
			return e, fmt.Errorf("read the link %s: %w", rel, err)
		}
		e.Target = t
	}
	return e, nil
}

// resolve finds the entry at parts, through no link (guestfiles.Resolve):
// each folder on the way is read from the image by inode and must be a
// folder, not a link.
func (f *files) resolve(ctx context.Context, img fsImage, parts []string) (entry, error) {
	ns, err := img.inodes(ctx, f.lookTemp(), []uint32{rootIno})
	if err != nil {
		return entry{}, err
	}
	cur := ns[0]
	rel := guestfiles.Rel(parts)
	if len(parts) > 0 {
		cur, err = guestfiles.Resolve(parts, "", inode.kind, func(k int) (inode, error) {
			if cur.kind() != "dir" {
				return inode{}, guestfiles.NotFound(rel, "")
			}
			list, err := img.list(ctx, cur.ino)
			if err != nil {
				return inode{}, err
			}
			var ino uint32
			for _, d := range list {
				if d.name == parts[k] {
					ino = d.ino
					break
				}
			}
			if ino == 0 {
				return inode{}, guestfiles.NotFound(rel, "")
			}
			ns, err := img.inodes(ctx, f.lookTemp(), []uint32{ino})
			if err != nil {
				return inode{}, err
			}
			cur = ns[0]
			return cur, nil
		})
		if err != nil {
			return entry{}, err
		}
	}
	return entryOf(ctx, img, rel, cur)
}

// lookTemp is where a look's command files go.
func (f *files) lookTemp() string { return f.b.cfg.Dir }

// children lists the folder e's entries, sorted by name.
func (f *files) children(ctx context.Context, img fsImage, e entry) ([]entry, error) {
	list, err := img.list(ctx, e.n.ino)
	if err != nil {
		return nil, err
	}
	if len(list) > guestfiles.MaxEntries {
		return nil, guestfiles.TooMany("")
	}
	sort.Slice(list, func(i, j int) bool { return list[i].name < list[j].name })
	inos := make([]uint32, len(list))
	for i, d := range list {
		inos[i] = d.ino
	}
	ns, err := img.inodes(ctx, f.lookTemp(), inos)
	if err != nil {
		return nil, err
	}
	out := make([]entry, len(list))
	for i, d := range list {
		if out[i], err = entryOf(ctx, img, guestfiles.Join(e.Path, d.name), ns[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// look opens a side (a snapshot, or the box's disk now) and resolves p on it.
func (f *files) look(ctx context.Context, ref providers.SnapshotRef, now bool, p string) (fsImage, entry, func(), error) {
	parts, err := guestfiles.Parts(p)
	if err != nil {
		return fsImage{}, entry{}, nil, err
	}
	img, done, err := f.lookAt(ctx, ref, now)
	if err != nil {
		return fsImage{}, entry{}, nil, err
	}
	e, err := f.resolve(ctx, img, parts)
	if err != nil {
		done()
		return fsImage{}, entry{}, nil, err
	}
	return img, e, done, nil
}

// ListFiles lists one folder of a snapshot.
func (f *files) ListFiles(ctx context.Context, ref providers.SnapshotRef, dir string) ([]providers.FileEntry, error) {
	img, e, done, err := f.look(ctx, ref, false, dir)
	if err != nil {
		return nil, fmt.Errorf("browse: %w", err)
	}
	defer done()
	if err := guestfiles.FolderOnly(e.Path, e.Type, e.Target); err != nil {
		return nil, err
	}
	kids, err := f.children(ctx, img, e)
	if err != nil {
		return nil, err
	}
	out := make([]providers.FileEntry, len(kids))
	for i, k := range kids {
		out[i] = k.FileEntry
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// ReadFile writes one file of a snapshot, of at most providers.MaxReadBytes,
// to w.
func (f *files) ReadFile(ctx context.Context, ref providers.SnapshotRef, p string, w io.Writer) (providers.FileEntry, error) {
	img, e, done, err := f.look(ctx, ref, false, p)
	if err != nil {
		return providers.FileEntry{}, fmt.Errorf("download: %w", err)
	}
	defer done()
	data, err := readLimited(ctx, img, e, providers.MaxReadBytes, "", guestfiles.ReadAllows)
	if err != nil {
		return providers.FileEntry{}, err
	}
	if _, err := w.Write(data); err != nil {
		return providers.FileEntry{}, fmt.Errorf("download %s: %w", e.Path, err)
	}
	return e.FileEntry, nil
}

// readLimited reads one file's content, of at most limit bytes; a larger one
// is refused in words before it is read, and one whose content runs past
// its size and the limit is cut off (guestfiles.ReadAtMost).
func readLimited(ctx context.Context, img fsImage, e entry, limit int64, where, why string) ([]byte, error) {
	if err := guestfiles.FileOnly(e.Path, where, e.Type, e.Target); err != nil {
		return nil, err
	}
	if e.Size > limit {
		return nil, guestfiles.TooLarge(e.Path, where, e.Size, limit, why)
	}
	rc, err := img.open(ctx, e.n)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return guestfiles.ReadAtMost(rc, e.Path, where, e.Size, limit, why)
}

// OpenFile opens one file of a snapshot, of any size, to be streamed; its
// copy stays until it is closed.
func (f *files) OpenFile(ctx context.Context, ref providers.SnapshotRef, p string) (io.ReadCloser, providers.FileEntry, error) {
	img, e, done, err := f.look(ctx, ref, false, p)
	if err != nil {
		return nil, providers.FileEntry{}, fmt.Errorf("download: %w", err)
	}
	if err := guestfiles.FileOnly(e.Path, "", e.Type, e.Target); err != nil {
		done()
		return nil, providers.FileEntry{}, err
	}
	rc, err := img.open(ctx, e.n)
	if err != nil {
		done()
		return nil, providers.FileEntry{}, err
	}
	return guestfiles.CloseThen(rc, done), e.FileEntry, nil
}

// WalkFiles calls fn with every entry of a snapshot under dir, dir first,
// each folder before what it holds, by name within each folder. The copy
// stays while fn runs, so that fn's OpenFile of each file reads the same
// one.
func (f *files) WalkFiles(ctx context.Context, ref providers.SnapshotRef, dir string, fn func(providers.FileEntry) error) error {
	img, e, done, err := f.look(ctx, ref, false, dir)
	if err != nil {
		return fmt.Errorf("download: %w", err)
	}
	defer done()
	return f.walk(ctx, img, e, func(e entry) error { return fn(e.FileEntry) })
}

// walk calls fn with e and, for a folder, everything under it, each folder
// before what it holds, at most guestfiles.MaxEntries of them.
func (f *files) walk(ctx context.Context, img fsImage, top entry, fn func(entry) error) error {
	seen := 0
	var visit func(e entry) error
	visit = func(e entry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if seen++; seen > guestfiles.MaxEntries {
			return guestfiles.TooMany("")
		}
		if err := fn(e); err != nil {
			return err
		}
		if e.Type != "dir" {
			return nil
		}
		kids, err := f.children(ctx, img, e)
		if err != nil {
			return err
		}
		for _, k := range kids {
			if err := visit(k); err != nil {
				return err
			}
		}
		return nil
	}
	return visit(top)
}

// DiffFile compares one text file of the snapshot with the same path in
// another snapshot, or in the box's disk now (against nil); a side without
// the path reads as /dev/null (guestfiles.DiffFile).
func (f *files) DiffFile(ctx context.Context, ref providers.SnapshotRef, against *providers.SnapshotRef, p string) (string, error) {
	parts, err := guestfiles.Parts(p)
	if err != nil {
		return "", err
	}
	return guestfiles.DiffFile(ref, against, guestfiles.Rel(parts), func(r providers.SnapshotRef, now bool) ([]byte, bool, error) {
		where := ""
		if now {
			where = " in the box now"
		}
		img, e, done, err := f.look(ctx, r, now, p)
		if errors.Is(err, providers.ErrNotFound) {
			return nil, true, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("compare: %w", err)
		}
		defer done()
		data, err := readLimited(ctx, img, e, providers.MaxDiffBytes, where, guestfiles.DiffAllows)
		return data, false, err
	})
}

// CompareFiles lists what differs between a snapshot and another snapshot,
// or the box's disk now (against nil), by type, permission bits, a link's
// target, a file's size and, where the sizes are the same, its content.
func (f *files) CompareFiles(ctx context.Context, ref providers.SnapshotRef, against *providers.SnapshotRef) ([]providers.FileChange, error) {
	var imgs [2]fsImage
	var lists [2][]entry
	for i := range 2 {
		r, now := ref, i == 1 && against == nil
		if i == 1 && against != nil {
			r = *against
		}
		img, top, done, err := f.look(ctx, r, now, "")
		if err != nil {
			return nil, fmt.Errorf("compare: %w", err)
		}
		defer done()
		err = f.walk(ctx, img, top, func(e entry) error {
			if e.Path != "." {
				lists[i] = append(lists[i], e)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("compare: %w", err)
		}
		sort.Slice(lists[i], func(a, c int) bool { return lists[i][a].Path < lists[i][c].Path })
		imgs[i] = img
	}
	sums, err := f.sameSizeHashes(ctx, imgs, lists)
	if err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	same := func(o, n *entry) bool {
		if o.Type != n.Type || o.Mode != n.Mode || o.Target != n.Target || o.Size != n.Size {
			return false
		}
		return o.Type != "file" || sums[0][o.n.ino] == sums[1][n.n.ino]
	}
	return providers.CompareListings(lists[0], lists[1], func(e *entry) providers.Listed {
		return providers.Listed{Path: e.Path, Type: e.Type, Size: e.Size}
	}, same), nil
}

// sameSizeHashes hashes, on each side, the files whose path is a file of
// the same size on the other (the others differ by their size), by inode:
// one debugfs run a side.
func (f *files) sameSizeHashes(ctx context.Context, imgs [2]fsImage, lists [2][]entry) ([2]map[uint32][sha256.Size]byte, error) {
	var out [2]map[uint32][sha256.Size]byte
	cur := map[string]*entry{}
	for i := range lists[1] {
		cur[lists[1][i].Path] = &lists[1][i]
	}
	var want [2][]inode
	seen := [2]map[uint32]bool{{}, {}}
	for i := range lists[0] {
		o := &lists[0][i]
		n := cur[o.Path]
		if n == nil || o.Type != "file" || n.Type != "file" || o.Size != n.Size {
			continue
		}
		for side, e := range [2]*entry{o, n} {
			if !seen[side][e.n.ino] {
				seen[side][e.n.ino] = true
				want[side] = append(want[side], e.n)
			}
		}
	}
	for side := range 2 {
		sums, err := imgs[side].hashes(ctx, f.lookTemp(), want[side])
		if err != nil {
			return out, err
		}
		out[side] = make(map[uint32][sha256.Size]byte, len(sums))
		for i, n := range want[side] {
			out[side][n.ino] = sums[i]
		}
	}
	return out, nil
}
