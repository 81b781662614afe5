package contents

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// Looking inside a snapshot: its tree, a file's text, a download of a file or a folder (a
// folder streams as a tar.gz), and a comparison with the box now or with
// another snapshot of the same box. Every call checks MayAct for the
// snapshot, so an agent sees inside only what it may see.

// EvDownloaded is the box log's event of a download from a snapshot.
const EvDownloaded = "downloaded"

// MaxShownBytes is the most of a file's text a page or an answer shows
// inline; past it, it says so and offers the download.
const MaxShownBytes = 256 << 10

// DefaultComparePage is how many changes a page of a comparison lists.
const DefaultComparePage = 200

// MaxComparePage is the most changes one page lists.
const MaxComparePage = 1000

// browserOf gives the box's backend's Browser, or a refusal saying why it
// cannot look inside a snapshot.
func (s *Contents) browserOf(b *snapshots.Box) (providers.Browser, error) {
	be, err := s.k.Backend(b.BackendID)
	if err != nil {
		return nil, err
	}
	if br, ok := be.Snap.(providers.Browser); ok {
		return br, nil
	}
	return nil, refusal(snapshots.CodeCannot, CannotBrowseWords(be.Label))
}

// BrowseWhyNot is "" when the box's snapshots can be browsed and compared,
// else why not, for a disabled item.
func (s *Contents) BrowseWhyNot(b *snapshots.Box) string {
	if _, err := s.browserOf(b); err != nil {
		return err.Error()
	}
	return ""
}

// LookWhyNot is "" when a snapshot's files can be looked at, else why
// not, for a disabled item: its state, or its backend.
func (s *Contents) LookWhyNot(b *snapshots.Box, sn *snapshots.Snapshot) string {
	if sn.State != snapshots.StateReady {
		return NothingInsideWords(sn.Name, snapshots.StateWords(sn.State))
	}
	return s.BrowseWhyNot(b)
}

// lookable finds a snapshot the caller may look inside, and its Browser.
func (s *Contents) lookable(ctx context.Context, c snapshots.Caller, id string) (*snapshots.Snapshot, *snapshots.Box, providers.Browser, error) {
	sn, b, err := s.snaps.Snapshot(ctx, c, id)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := snapshots.MayAct(c, snapshots.ActSee, b, sn); err != nil {
		return nil, nil, nil, snapshots.SnapshotNotFound(id)
	}
	if sn.State != snapshots.StateReady {
		return nil, nil, nil, refusal(snapshots.CodeConflict, NothingInsideWords(sn.Name, snapshots.StateWords(sn.State)))
	}
	br, err := s.browserOf(b)
	if err != nil {
		return nil, nil, nil, err
	}
	return sn, b, br, nil
}

// filesError turns a backend's answer about a path into words.
func filesError(sn *snapshots.Snapshot, p string, err error) error {
	var refused *providers.RefusedError
	switch {
	case errors.As(err, &refused):
		return refusal(snapshots.CodeInvalid, backendSaysWords(refused.Why))
	case errors.Is(err, providers.ErrNotFound):
		return refusal(snapshots.CodeNotFound, noPathInWords(shownPath(p), sn.Name))
	case errors.Is(err, providers.ErrIncomplete):
		return refusal(snapshots.CodeConflict, cannotBeReadWords(sn.Name, err.Error()))
	}
	return fmt.Errorf("look inside %s: %w", sn.ID, err)
}

func shownPath(p string) string {
	if p == "" || p == "." || p == "/" {
		return "top folder"
	}
	return "/" + strings.TrimPrefix(p, "/")
}

// CleanPath checks a path a caller gives inside a snapshot: relative to the
// box's folder, with no ".." and no NUL. It gives the
// clean path ("" for the top) or a refusal in words; an absolute path is
// refused. A path through a link is refused by the backend, which never
// follows one.
func CleanPath(p string) (string, error) {
	if strings.ContainsRune(p, 0) || !utf8.ValidString(p) {
		return "", refusal(snapshots.CodeInvalid, notAPathWords)
	}
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") {
		return "", refusal(snapshots.CodeInvalid, absolutePathWords(p))
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return "", refusal(snapshots.CodeInvalid, climbsOutWords(p))
		}
	}
	c := path.Clean("/" + p)
	c = strings.TrimPrefix(c, "/")
	if c == "." {
		c = ""
	}
	if len(c) > 4096 {
		return "", refusal(snapshots.CodeInvalid, pathTooLongWords)
	}
	return c, nil
}

// Listing is one folder of a snapshot.
type Listing struct {
	Snapshot *snapshots.Snapshot   `json:"-"`
	Box      *snapshots.Box        `json:"-"`
	Path     string                `json:"path"`
	Entries  []providers.FileEntry `json:"entries"`
}

// Browse lists one folder of a snapshot ("" is the top): folders first,
// then by name. Links are listed as links, never followed.
func (s *Contents) Browse(ctx context.Context, c snapshots.Caller, id, dir string) (*Listing, error) {
	sn, b, br, err := s.lookable(ctx, c, id)
	if err != nil {
		return nil, err
	}
	dir, err = CleanPath(dir)
	if err != nil {
		return nil, err
	}
	es, err := br.ListFiles(ctx, snapshots.RefOf(sn, b), dir)
	if err != nil {
		return nil, filesError(sn, dir, err)
	}
	sort.SliceStable(es, func(i, j int) bool {
		if di, dj := es[i].Type == "dir", es[j].Type == "dir"; di != dj {
			return di
		}
		return es[i].Path < es[j].Path
	})
	if es == nil {
		es = []providers.FileEntry{}
	}
	return &Listing{Snapshot: sn, Box: b, Path: dir, Entries: es}, nil
}

// Shown is one file of a snapshot as a page or an answer shows it.
type Shown struct {
	Snapshot *snapshots.Snapshot `json:"-"`
	Box      *snapshots.Box      `json:"-"`
	Entry    providers.FileEntry `json:"entry"`
	// Text is the file's text, up to MaxShownBytes; empty when it is not
	// text.
	Text string `json:"text,omitempty"`
	// Binary is set when the file is not text: it is offered as a download.
	Binary bool `json:"binary,omitempty"`
	// Cut says the text stops at MaxShownBytes, in words.
	Cut string `json:"cut,omitempty"`
}

// ShowFile reads one file of a snapshot for showing inline: its text up to
// MaxShownBytes, with words when it stops there. A link is shown as a link.
func (s *Contents) ShowFile(ctx context.Context, c snapshots.Caller, id, p string) (*Shown, error) {
	sn, b, br, err := s.lookable(ctx, c, id)
	if err != nil {
		return nil, err
	}
	p, err = CleanPath(p)
	if err != nil {
		return nil, err
	}
	if p == "" {
		return nil, refusal(snapshots.CodeInvalid, topFolderWords)
	}
	ref := snapshots.RefOf(sn, b)
	// A link or a folder is described by its folder's listing, never
	// opened.
	parent := path.Dir(p)
	if parent == "." {
		parent = ""
	}
	es, err := br.ListFiles(ctx, ref, parent)
	if err != nil {
		return nil, filesError(sn, p, err)
	}
	var entry *providers.FileEntry
	for i := range es {
		if es[i].Path == p {
			entry = &es[i]
		}
	}
	if entry == nil {
		return nil, filesError(sn, p, providers.ErrNotFound)
	}
	out := &Shown{Snapshot: sn, Box: b, Entry: *entry}
	if entry.Type != "file" {
		return out, nil
	}
	rc, _, err := br.OpenFile(ctx, ref, p)
	if err != nil {
		return nil, filesError(sn, p, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, MaxShownBytes))
	if err != nil {
		return nil, filesError(sn, p, err)
	}
	if !looksText(data) {
		out.Binary = true
		return out, nil
	}
	if entry.Size > MaxShownBytes {
		data = trimToRune(data)
		out.Cut = fmt.Sprintf("Showing the first %s of %s: download the file for all of it.", snapshots.GB(MaxShownBytes), snapshots.GB(entry.Size))
	}
	out.Text = string(data)
	return out, nil
}

// looksText says whether the start of a file is text: no NUL, valid UTF-8
// (a rune cut at the end is allowed).
func looksText(data []byte) bool {
	if bytes.IndexByte(data, 0) >= 0 {
		return false
	}
	return utf8.Valid(trimToRune(data))
}

// trimToRune drops a rune cut at the end of data.
func trimToRune(data []byte) []byte {
	for i := 0; i < utf8.UTFMax && len(data) > 0; i++ {
		if utf8.Valid(data) {
			return data
		}
		data = data[:len(data)-1]
	}
	return data
}

// Download is a download of a file or a folder of a snapshot, checked and
// recorded; WriteTo streams it.
type Download struct {
	// Name is the file's name, or the folder's with ".tar.gz".
	Name string
	// Folder is set for a folder, streamed as a tar.gz.
	Folder bool
	// Size is a file's size; 0 for a folder, whose size is known only once
	// it is written.
	Size int64
	sn   *snapshots.Snapshot
	b    *snapshots.Box
	br   providers.Browser
	path string
}

// OpenDownload checks that the caller may download path of a snapshot and
// records the download in the box log with who made it. Nothing is read
// until WriteTo.
func (s *Contents) OpenDownload(ctx context.Context, c snapshots.Caller, id, p string) (*Download, error) {
	sn, b, br, err := s.lookable(ctx, c, id)
	if err != nil {
		return nil, err
	}
	p, err = CleanPath(p)
	if err != nil {
		return nil, err
	}
	d := &Download{sn: sn, b: b, br: br, path: p}
	if p == "" {
		d.Folder, d.Name = true, sn.BoxName+".tar.gz"
	} else {
		parent := path.Dir(p)
		if parent == "." {
			parent = ""
		}
		es, err := br.ListFiles(ctx, snapshots.RefOf(sn, b), parent)
		if err != nil {
			return nil, filesError(sn, p, err)
		}
		var entry *providers.FileEntry
		for i := range es {
			if es[i].Path == p {
				entry = &es[i]
			}
		}
		switch {
		case entry == nil:
			return nil, filesError(sn, p, providers.ErrNotFound)
		case entry.Type == "dir":
			d.Folder, d.Name = true, path.Base(p)+".tar.gz"
		case entry.Type == "file":
			d.Name, d.Size = path.Base(p), entry.Size
		case entry.Type == "link":
			return nil, refusal(snapshots.CodeInvalid, linkNeverFollowedWords(shownPath(p), entry.Target))
		default:
			return nil, refusal(snapshots.CodeInvalid, notFileOrFolderWords(shownPath(p)))
		}
	}
	// Before the first byte: a snapshot whose backend can tell it cannot
	// read it whole is refused in words, not answered 200 and cut short.
	if rc, ok := br.(providers.ReadChecker); ok {
		if err := rc.CheckReadable(ctx, snapshots.RefOf(sn, b), p); err != nil {
			return nil, filesError(sn, p, err)
		}
	}
	s.k.Log(ctx, s.st.Pool, b.ID, EvDownloaded, c, logDownloadedWords(shownPath(p), d.Size, d.Folder, sn.Name), sn.ID, "", map[string]any{"path": p, "folder": d.Folder})
	return d, nil
}

// WriteTo streams the download to w: a file as it is, a folder as a tar.gz
// written entry by entry, never whole in memory or on disk. Links go in as
// links. When a read fails part way it answers the error with the stream
// unfinished: a file short of its last byte, a tar.gz with no end (no gzip
// trailer); the caller must then end the answer as an error, never as a
// whole (an HTTP handler panics with http.ErrAbortHandler).
func (d *Download) WriteTo(ctx context.Context, w io.Writer) error {
	ref := snapshots.RefOf(d.sn, d.b)
	if !d.Folder {
		rc, _, err := d.br.OpenFile(ctx, ref, d.path)
		if err != nil {
			return filesError(d.sn, d.path, err)
		}
		defer rc.Close()
		// The backend checks a file's content at its end: its last byte
		// is held back until then, so a file found damaged there never
		// reaches the client whole.
		hw := &holdLast{w: w}
		if _, err := io.Copy(hw, rc); err != nil {
			return fmt.Errorf("download %s: %w", shownPath(d.path), err)
		}
		return hw.flush()
	}
	zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	top := strings.TrimSuffix(d.Name, ".tar.gz")
	name := func(p string) string {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, d.path), "/")
		if d.path == "" && p == "." {
			rel = ""
		}
		if rel == "" || rel == "." {
			return top
		}
		return top + "/" + rel
	}
	err = d.br.WalkFiles(ctx, ref, d.path, func(e providers.FileEntry) error {
		h := &tar.Header{Name: name(e.Path), Mode: int64(e.Mode & 0o7777), ModTime: e.ModTime, Format: tar.FormatPAX}
		switch e.Type {
		case "dir":
			h.Typeflag, h.Name = tar.TypeDir, h.Name+"/"
			return tw.WriteHeader(h)
		case "link":
			h.Typeflag, h.Linkname = tar.TypeSymlink, e.Target
			return tw.WriteHeader(h)
		case "file":
			h.Typeflag, h.Size = tar.TypeReg, e.Size
			rc, _, err := d.br.OpenFile(ctx, ref, e.Path)
			if err != nil {
				return err
			}
			defer rc.Close()
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			_, err = io.Copy(tw, rc)
			return err
		}
		return nil // other kinds (named pipes) have no content to give
	})
	if err != nil {
		return fmt.Errorf("download %s: %w", shownPath(d.path), err)
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// holdLast writes all but the last byte written to it, until flush.
type holdLast struct {
	w    io.Writer
	last []byte
}

func (h *holdLast) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if len(h.last) > 0 {
		if _, err := h.w.Write(h.last); err != nil {
			return 0, err
		}
	}
	if _, err := h.w.Write(p[:len(p)-1]); err != nil {
		return 0, err
	}
	h.last = append(h.last[:0], p[len(p)-1])
	return len(p), nil
}

func (h *holdLast) flush() error {
	if len(h.last) == 0 {
		return nil
	}
	_, err := h.w.Write(h.last)
	return err
}

// Compare lists what differs between a snapshot and the box now (against
// "") or another snapshot of the same box (against its ID or name), a page
// of limit changes from offset, sorted by path.
func (s *Contents) Compare(ctx context.Context, c snapshots.Caller, id, against string, offset, limit int) (*snapshots.Comparison, error) {
	sn, b, br, err := s.lookable(ctx, c, id)
	if err != nil {
		return nil, err
	}
	var other *snapshots.Snapshot
	var otherRef *providers.SnapshotRef
	if against != "" {
		other, err = s.compareTarget(ctx, c, b, against)
		if err != nil {
			return nil, err
		}
		r := snapshots.RefOf(other, b)
		otherRef = &r
	} else if b.State != snapshots.BoxReady {
		return nil, refusal(snapshots.CodeConflict, NoBoxToCompareWords(b.Name, b.State))
	}
	if offset < 0 {
		offset = 0
	}
	if limit <= 0 {
		limit = DefaultComparePage
	}
	if limit > MaxComparePage {
		limit = MaxComparePage
	}
	key := sn.ID + "|"
	if other != nil {
		key += other.ID
	}
	// The first page compares again; the pages after it read the list the
	// first page made, while it is fresh, so paging is quick and
	// consistent.
	all, ok := s.compares.get(key, offset > 0, s.now())
	if !ok {
		all, err = br.CompareFiles(ctx, snapshots.RefOf(sn, b), otherRef)
		if err != nil {
			return nil, filesError(sn, "", err)
		}
		s.compares.put(key, all, s.now())
	}
	out := &snapshots.Comparison{Snapshot: sn, Box: b, Against: other, Total: len(all), Offset: offset}
	for _, ch := range all {
		switch ch.Change {
		case providers.ChangeAdded:
			out.Added++
		case providers.ChangeRemoved:
			out.Removed++
		default:
			out.Changed++
		}
	}
	if offset < len(all) {
		end := min(offset+limit, len(all))
		out.Changes = all[offset:end]
	}
	if out.Changes == nil {
		out.Changes = []providers.FileChange{}
	}
	out.Words = ChangesWords(out.Changed, out.Added, out.Removed, other)
	return out, nil
}

// compareTarget finds the other snapshot of a comparison: of the same box,
// one the caller may see.
func (s *Contents) compareTarget(ctx context.Context, c snapshots.Caller, b *snapshots.Box, ref string) (*snapshots.Snapshot, error) {
	other, ob, err := s.snaps.SnapshotOfBox(ctx, c, b.ID, ref)
	if err != nil {
		return nil, err
	}
	if ob.ID != b.ID {
		return nil, refusal(snapshots.CodeInvalid, compareSameBoxWords(other.Name))
	}
	if other.State != snapshots.StateReady {
		return nil, refusal(snapshots.CodeConflict, nothingToCompareWords(other.Name, snapshots.StateWords(other.State)))
	}
	return other, nil
}

// DiffFile gives the unified diff of one text file between a snapshot and
// the box now (against "") or another snapshot of the same box: "" when it
// did not change.
func (s *Contents) DiffFile(ctx context.Context, c snapshots.Caller, id, against, p string) (string, error) {
	sn, b, br, err := s.lookable(ctx, c, id)
	if err != nil {
		return "", err
	}
	p, err = CleanPath(p)
	if err != nil {
		return "", err
	}
	if p == "" {
		return "", refusal(snapshots.CodeInvalid, nameAFileWords)
	}
	var otherRef *providers.SnapshotRef
	if against != "" {
		other, err := s.compareTarget(ctx, c, b, against)
		if err != nil {
			return "", err
		}
		r := snapshots.RefOf(other, b)
		otherRef = &r
	}
	diff, err := br.DiffFile(ctx, snapshots.RefOf(sn, b), otherRef, p)
	if err != nil {
		return "", filesError(sn, p, err)
	}
	return diff, nil
}

// RestorePreview says what a restore of box to a snapshot would change: the
// comparison of the snapshot with the box now, first page. It is nil (with
// no error) where the backend cannot tell.
func (s *Contents) RestorePreview(ctx context.Context, c snapshots.Caller, id string) (*snapshots.Comparison, error) {
	sn, b, err := s.snaps.Snapshot(ctx, c, id)
	if err != nil {
		return nil, err
	}
	if _, err := s.browserOf(b); err != nil {
		return nil, nil
	}
	if sn.State != snapshots.StateReady || b.State != snapshots.BoxReady {
		return nil, nil
	}
	return s.Compare(ctx, c, id, "", 0, DefaultComparePage)
}
