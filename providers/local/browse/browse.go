package browse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/guestfiles"
	"github.com/boxsnap/boxsnap/providers/local/confined"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// Files answers the browsing of a local backend's snapshots and boxes.
var (
	_ providers.Browser     = (*Files)(nil)
	_ providers.ReadChecker = (*Files)(nil)
)

// Files answers what a snapshot of a local box holds and how it differs
// from another or from the box now (providers.Browser), and whether its
// content reads whole (providers.ReadChecker): it reads manifests and
// content from the store, and a box's own files only beneath its folder.
type Files struct {
	*store.Store
	*confined.Scanner
	Workers int

	// What the backend's boxes, takes and restores answer.
	LoadUsable  func(ref providers.SnapshotRef) (*store.Manifest, error)
	OwnerOf     func(m *store.Manifest) string
	MarkDamaged func(id, why string)
	GuestOf     func(box, kind string) providers.Guest
	ExistingBox func(guest providers.Guest) (string, error)
	KnownIndex  func(box string) (map[string]*store.Entry, error)
	HashBeneath func(root *confined.Beneath, rel string, want *confined.FileID) (string, int64, error)
}

// ListFiles lists one folder of a snapshot, read from its manifest.
func (b *Files) ListFiles(ctx context.Context, ref providers.SnapshotRef, dir string) ([]providers.FileEntry, error) {
	m, err := b.LoadUsable(ref)
	if err != nil {
		return nil, fmt.Errorf("browse: %w", err)
	}
	rel, err := safeRel(dir)
	if err != nil {
		return nil, err
	}
	idx := m.ByPath()
	e, err := walkManifest(idx, rel)
	if err != nil {
		return nil, err
	}
	if err := guestfiles.FolderOnly(rel, entryKind(e), e.Target); err != nil {
		return nil, err
	}
	var out []providers.FileEntry
	for i := range m.Entries {
		c := &m.Entries[i]
		if c.Path == "." || c.Path == confined.MarkerDir || parentOf(c.Path) != rel {
			continue
		}
		out = append(out, fileEntry(c))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// ReadFile writes one file of a snapshot, of at most providers.MaxReadBytes,
// to w, after checking its content against its hash.
func (b *Files) ReadFile(ctx context.Context, ref providers.SnapshotRef, p string, w io.Writer) (providers.FileEntry, error) {
	m, err := b.LoadUsable(ref)
	if err != nil {
		return providers.FileEntry{}, fmt.Errorf("download: %w", err)
	}
	data, e, err := b.SnapshotFile(m, p, providers.MaxReadBytes)
	if err != nil {
		return providers.FileEntry{}, err
	}
	if _, err := w.Write(data); err != nil {
		return providers.FileEntry{}, fmt.Errorf("download %s: %w", e.Path, err)
	}
	return fileEntry(e), nil
}

// DiffFile compares one text file of the snapshot with the same path in
// another snapshot, or in the box's folder now (against nil).
func (b *Files) DiffFile(ctx context.Context, ref providers.SnapshotRef, against *providers.SnapshotRef, p string) (string, error) {
	m, err := b.LoadUsable(ref)
	if err != nil {
		return "", fmt.Errorf("compare: %w", err)
	}
	rel, err := safeRel(p)
	if err != nil {
		return "", err
	}
	old, _, err := b.SnapshotFile(m, rel, providers.MaxDiffBytes)
	if err != nil && !errors.Is(err, providers.ErrNotFound) {
		return "", err
	}
	oldName := "a/" + rel
	if errors.Is(err, providers.ErrNotFound) {
		old, oldName = nil, "/dev/null"
	}
	var cur []byte
	newName := "b/" + rel
	if against != nil {
		am, err := b.LoadUsable(*against)
		if err != nil {
			return "", fmt.Errorf("compare: %w", err)
		}
		cur, _, err = b.SnapshotFile(am, rel, providers.MaxDiffBytes)
		if errors.Is(err, providers.ErrNotFound) {
			cur, newName = nil, "/dev/null"
		} else if err != nil {
			return "", err
		}
	} else {
		guest := m.Guest
		if owner := b.OwnerOf(m); owner != guest.Ref {
			guest = b.GuestOf(owner, m.Guest.Kind) // an imported snapshot's box
		}
		cur, err = b.boxFile(guest, rel)
		if errors.Is(err, providers.ErrNotFound) {
			cur, newName = nil, "/dev/null"
		} else if err != nil {
			return "", err
		}
	}
	return providers.CompareSides(rel, oldName, old, newName, cur)
}

// safeRel cleans a caller's path as the guests' looks do, refusing one
// that climbs with ".." (guestfiles.Parts), and refuses boxsnap's own
// folder in the box, which holds the box's access file. It answers the
// path as a manifest records it: "." for the top.
func safeRel(p string) (string, error) {
	parts, err := guestfiles.Parts(p)
	if err != nil {
		return "", err
	}
	rel := guestfiles.Rel(parts)
	if rel == confined.MarkerDir || strings.HasPrefix(rel, confined.MarkerDir+"/") {
		return "", &providers.RefusedError{Why: fmt.Sprintf("%s holds boxsnap's own files, such as the box's access, and is not browsed", confined.MarkerDir)}
	}
	return rel, nil
}

// walkManifest finds rel in a manifest, refusing a path through a link
// (guestfiles.Resolve).
func walkManifest(idx map[string]*store.Entry, rel string) (*store.Entry, error) {
	if rel == "." {
		if e := idx["."]; e != nil {
			return e, nil
		}
		return nil, fmt.Errorf("the snapshot's top folder: %w", providers.ErrNotFound)
	}
	parts := strings.Split(rel, "/")
	return guestfiles.Resolve(parts, "", entryKind, func(k int) (*store.Entry, error) {
		e := idx[guestfiles.Rel(parts[:k+1])]
		if e == nil {
			return nil, guestfiles.NotFound(rel, "")
		}
		return e, nil
	})
}

// SnapshotFile reads a regular file of a snapshot, of at most limit bytes,
// checked against its hash.
func (b *Files) SnapshotFile(m *store.Manifest, p string, limit int64) ([]byte, *store.Entry, error) {
	rel, err := safeRel(p)
	if err != nil {
		return nil, nil, err
	}
	e, err := walkManifest(m.ByPath(), rel)
	if err != nil {
		return nil, nil, err
	}
	if err := guestfiles.FileOnly(rel, "", entryKind(e), e.Target); err != nil {
		return nil, nil, err
	}
	if e.Size > limit {
		return nil, nil, guestfiles.TooLarge(rel, "", e.Size, limit, guestfiles.ReadAllows)
	}
	// Its callers hold no context to pass: the fetch of one file of at
	// most limit bytes is bounded by the store's own tries.
	f, err := b.OpenContent(context.Background(), e.Hash, e.Size)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("read %s: its content is missing: %w", rel, providers.ErrIncomplete)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", rel, err)
	}
	data, err := io.ReadAll(f)
	_ = f.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: its content is missing: %w", rel, providers.ErrIncomplete)
	}
	if sum := store.Sha256Hex(data); sum != e.Hash {
		b.MarkDamaged(m.ID, fmt.Sprintf("Its content is damaged on disk: %s does not match its hash", rel))
		return nil, nil, fmt.Errorf("read %s: %w: %w", rel, store.ErrDamaged, providers.ErrIncomplete)
	}
	return data, e, nil
}

// boxFile reads a file of the box's folder now, through no link, of at most
// providers.MaxDiffBytes. It is opened beneath the box's folder,
// non-blocking, and checked by its descriptor to be a regular file before
// any read (openRegular): a pipe at its path is refused at once, never
// waited on.
func (b *Files) boxFile(guest providers.Guest, rel string) ([]byte, error) {
	dir, err := b.ExistingBox(guest)
	if err != nil {
		return nil, err
	}
	root, err := confined.OpenTree(dir)
	if err != nil {
		return nil, fmt.Errorf("open box %s: %w", guest.Ref, err)
	}
	defer root.Close()
	f, st, err := root.OpenRegular(rel, nil)
	if err != nil {
		switch {
		case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR):
			return nil, fmt.Errorf("%s in box %s now: %w", rel, guest.Ref, providers.ErrNotFound)
		case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EXDEV):
			return nil, guestfiles.ThroughLink(rel, "", nowWhere)
		case errors.Is(err, confined.ErrNotRegular):
			return nil, &providers.RefusedError{Why: fmt.Sprintf("%s in the box now is %s, not a file", rel, kindOfMode(st.Mode))}
		}
		return nil, fmt.Errorf("open %s in box %s: %w", rel, guest.Ref, err)
	}
	defer f.Close()
	return guestfiles.ReadAtMost(f, rel, nowWhere, st.Size, providers.MaxDiffBytes, guestfiles.DiffAllows)
}

// nowWhere names the box now as the side a refusal is on.
const nowWhere = " in the box now"

// kindOfMode names what a stat's type is, in words.
func kindOfMode(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return "a named pipe"
	case unix.S_IFDIR:
		return "a folder"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "a device"
	case unix.S_IFLNK:
		return "a link"
	}
	return "something else"
}

func parentOf(rel string) string {
	d := path.Dir(rel)
	return d
}

// entryKind is an entry's type as providers.FileEntry names it: "file",
// "dir", "link" or "other".
func entryKind(e *store.Entry) string {
	if t := map[string]string{store.TypeFile: "file", store.TypeDir: "dir", store.TypeLink: "link"}[e.Type]; t != "" {
		return t
	}
	return "other"
}

func fileEntry(e *store.Entry) providers.FileEntry {
	return providers.FileEntry{
		Path:    e.Path,
		Type:    entryKind(e),
		Mode:    uint32(e.FileMode()),
		Size:    e.Size,
		ModTime: time.Unix(0, e.MTime).UTC(),
		Target:  e.Target,
	}
}
