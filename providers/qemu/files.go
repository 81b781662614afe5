package qemu

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/boxsnap/boxsnap/providers"
)

// A snapshot's files are its guest's root file system as the snapshot's
// disk holds it (look.go makes the copy, debugfs.go reads it). Paths are the
// guest's, relative to its top folder ("" or "." is "/"). A caller's path
// that climbs with ".." is refused; each folder on the way must be a folder
// and not a link; a link is shown as stored and never followed; anything
// neither a file, a folder nor a link is "other" and never read.

var _ providers.Browser = (*Backend)(nil)

// maxLookEntries bounds the entries a walk or a comparison holds for one
// side, so a hostile tree cannot fill the server's memory.
const maxLookEntries = 1 << 20

// lookParts cleans a caller's path into its parts (none for the top),
// refusing one that climbs with "..".
func lookParts(p string) ([]string, error) {
	q := strings.Trim(p, "/")
	if q == "" || q == "." {
		return nil, nil
	}
	var parts []string
	for _, part := range strings.Split(q, "/") {
		switch part {
		case "..":
			return nil, &providers.RefusedError{Why: fmt.Sprintf("The path %q climbs out of the box with ..; paths are relative to the box's top folder", p)}
		case "", ".":
			continue
		}
		parts = append(parts, part)
	}
	return parts, nil
}

// relOf is the path of parts as entries give it: "." for the top.
func relOf(parts []string) string {
	if len(parts) == 0 {
		return "."
	}
	return strings.Join(parts, "/")
}

// joinRel is the path of name in the folder dir.
func joinRel(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

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

// resolve finds the entry at parts, through no link: each folder on the
// way is read and must be a folder, not a link.
func (f *files) resolve(ctx context.Context, img fsImage, parts []string) (entry, error) {
	ns, err := img.inodes(ctx, f.lookTemp(), []uint32{rootIno})
	if err != nil {
		return entry{}, err
	}
	cur := ns[0]
	for i, name := range parts {
		if cur.kind() != "dir" {
			return entry{}, fmt.Errorf("%s: %w", relOf(parts), providers.ErrNotFound)
		}
		list, err := img.list(ctx, cur.ino)
		if err != nil {
			return entry{}, err
		}
		var ino uint32
		for _, d := range list {
			if d.name == name {
				ino = d.ino
				break
			}
		}
		if ino == 0 {
			return entry{}, fmt.Errorf("%s: %w", relOf(parts), providers.ErrNotFound)
		}
		ns, err := img.inodes(ctx, f.lookTemp(), []uint32{ino})
		if err != nil {
			return entry{}, err
		}
		cur = ns[0]
		if i < len(parts)-1 && cur.kind() == "link" {
			return entry{}, &providers.RefusedError{Why: fmt.Sprintf("%s goes through a link (%s), which is never followed", relOf(parts), relOf(parts[:i+1]))}
		}
	}
	return entryOf(ctx, img, relOf(parts), cur)
}

// lookTemp is where a look's command files go.
func (f *files) lookTemp() string { return f.b.cfg.Dir }

// children lists the folder e's entries, sorted by name.
func (f *files) children(ctx context.Context, img fsImage, e entry) ([]entry, error) {
	list, err := img.list(ctx, e.n.ino)
	if err != nil {
		return nil, err
	}
	if len(list) > maxLookEntries {
		return nil, tooMany()
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
		if out[i], err = entryOf(ctx, img, joinRel(e.Path, d.name), ns[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// tooMany refuses a walk of more than maxLookEntries entries.
func tooMany() error {
	return &providers.RefusedError{Why: fmt.Sprintf("The box holds more than %d files and folders, more than boxsnap reads in one go", maxLookEntries)}
}

// look opens a side (a snapshot, or the box's disk now) and resolves p on it.
func (f *files) look(ctx context.Context, ref providers.SnapshotRef, now bool, p string) (fsImage, entry, func(), error) {
	parts, err := lookParts(p)
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
	switch e.Type {
	case "dir":
	case "link":
		return nil, &providers.RefusedError{Why: fmt.Sprintf("%s is a link to %s, which is never followed", e.Path, e.Target)}
	default:
		return nil, &providers.RefusedError{Why: fmt.Sprintf("%s is not a folder", e.Path)}
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

// fileOnly refuses an entry that is not a regular file.
func fileOnly(e entry, where string) error {
	switch e.Type {
	case "file":
		return nil
	case "link":
		return &providers.RefusedError{Why: fmt.Sprintf("%s%s is a link to %s, which is never followed", e.Path, where, e.Target)}
	}
	return &providers.RefusedError{Why: fmt.Sprintf("%s%s is not a file", e.Path, where)}
}

// ReadFile writes one file of a snapshot, of at most providers.MaxReadBytes,
// to w.
func (f *files) ReadFile(ctx context.Context, ref providers.SnapshotRef, p string, w io.Writer) (providers.FileEntry, error) {
	img, e, done, err := f.look(ctx, ref, false, p)
	if err != nil {
		return providers.FileEntry{}, fmt.Errorf("download: %w", err)
	}
	defer done()
	data, err := readLimited(ctx, img, e, providers.MaxReadBytes, "", "this allows: restore the snapshot or fork it instead")
	if err != nil {
		return providers.FileEntry{}, err
	}
	if _, err := w.Write(data); err != nil {
		return providers.FileEntry{}, fmt.Errorf("download %s: %w", e.Path, err)
	}
	return e.FileEntry, nil
}

// readLimited reads one file's content, of at most limit bytes; a larger one
// is refused in words before it is read.
func readLimited(ctx context.Context, img fsImage, e entry, limit int64, where, why string) ([]byte, error) {
	if err := fileOnly(e, where); err != nil {
		return nil, err
	}
	if e.Size > limit {
		return nil, &providers.RefusedError{Why: fmt.Sprintf("%s%s is %s, more than the %s %s", e.Path, where, providers.GB(e.Size), providers.GB(limit), why)}
	}
	rc, err := img.open(ctx, e.n)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("read %s%s: %w", e.Path, where, err)
	}
	return data, nil
}

// OpenFile opens one file of a snapshot, of any size, to be streamed; its
// copy stays until it is closed.
func (f *files) OpenFile(ctx context.Context, ref providers.SnapshotRef, p string) (io.ReadCloser, providers.FileEntry, error) {
	img, e, done, err := f.look(ctx, ref, false, p)
	if err != nil {
		return nil, providers.FileEntry{}, fmt.Errorf("download: %w", err)
	}
	if err := fileOnly(e, ""); err != nil {
		done()
		return nil, providers.FileEntry{}, err
	}
	rc, err := img.open(ctx, e.n)
	if err != nil {
		done()
		return nil, providers.FileEntry{}, err
	}
	return &doneCloser{ReadCloser: rc, done: done}, e.FileEntry, nil
}

// doneCloser lets a copy go when the file read from it closes.
type doneCloser struct {
	io.ReadCloser
	done func()
}

func (d *doneCloser) Close() error {
	err := d.ReadCloser.Close()
	d.done()
	return err
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
// before what it holds, at most maxLookEntries of them.
func (f *files) walk(ctx context.Context, img fsImage, top entry, fn func(entry) error) error {
	seen := 0
	var visit func(e entry) error
	visit = func(e entry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if seen++; seen > maxLookEntries {
			return tooMany()
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
// another snapshot, or in the box's disk now (against nil).
func (f *files) DiffFile(ctx context.Context, ref providers.SnapshotRef, against *providers.SnapshotRef, p string) (string, error) {
	parts, err := lookParts(p)
	if err != nil {
		return "", err
	}
	rel := relOf(parts)
	read := func(r providers.SnapshotRef, now bool) ([]byte, string, error) {
		where := ""
		if now {
			where = " in the box now"
		}
		img, e, done, err := f.look(ctx, r, now, p)
		if errors.Is(err, providers.ErrNotFound) {
			return nil, "/dev/null", nil
		}
		if err != nil {
			return nil, "", fmt.Errorf("compare: %w", err)
		}
		defer done()
		data, err := readLimited(ctx, img, e, providers.MaxDiffBytes, where, "a comparison allows")
		return data, "", err
	}
	old, oldName, err := read(ref, false)
	if err != nil {
		return "", err
	}
	var cur []byte
	var newName string
	if against != nil {
		cur, newName, err = read(*against, false)
	} else {
		cur, newName, err = read(ref, true)
	}
	if err != nil {
		return "", err
	}
	return providers.CompareSides(rel, oldName, old, newName, cur)
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
