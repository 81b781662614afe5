package boxfiles

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/guestfiles"
)

// A look inside a snapshot reads its files through the engine's archive
// endpoint (GET /containers/{id}/archive, a tar stream parsed here and never
// extracted on the host) from a look container: one made, never started,
// from the snapshot's image with the snapshot's volume copy mounted
// read-only where the box had its volume. The box's own image never runs.
// The box's files now are read the same way from its own container. Paths
// are the container's, relative to its top folder ("" or "." is "/").
//
// Everything a container holds is hostile, and the rules are package
// guestfiles', which QEMU's look keeps too: a caller's path that climbs
// with ".." is refused, each folder on the way is checked (one stat each)
// to be a folder and not a link before the engine is asked for what is
// under it, a link is reported as stored and never followed, and anything
// neither a file, a folder nor a link is "other" and never read. Here, an
// entry of the engine's stream whose name leaves the folder asked for ends
// the read too. A
// running box may swap a folder for a link between the check and the read:
// the engine then resolves it inside the container's own files, never onto
// the host, and a file read that meets anything but a file is refused.

var _ providers.Browser = (*Files)(nil)

// lookEntrypoint is a look container's command, which never runs: a look
// container is never started, and if one were, nothing of the box's would.
const lookEntrypoint = "/boxsnap-look-never-runs"

// LookAt gives the look container of a snapshot and the function that lets
// it go.
func (f *Files) LookAt(ctx context.Context, snap string) (string, func(), error) {
	if snap == "" {
		return "", nil, errors.New("a snapshot reference is required")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.held[snap]
	if l == nil {
		id, err := f.createLook(ctx, snap)
		if err != nil {
			return "", nil, err
		}
		l = &lookUse{id: id}
		if f.held == nil {
			f.held = map[string]*lookUse{}
		}
		f.held[snap] = l
	}
	l.users++
	var once sync.Once
	return l.id, func() { once.Do(func() { f.unlook(ctx, snap) }) }, nil
}

// unlook lets a look container go, removing it when no call reads it.
func (f *Files) unlook(ctx context.Context, snap string) {
	f.mu.Lock()
	l := f.held[snap]
	if l == nil {
		f.mu.Unlock()
		return
	}
	l.users--
	if l.users > 0 {
		f.mu.Unlock()
		return
	}
	delete(f.held, snap)
	f.mu.Unlock()
	rctx, cancel := short(context.WithoutCancel(ctx))
	defer cancel()
	_, _ = f.E.Client().ContainerRemove(rctx, l.id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
}

// createLook makes (never starts) a snapshot's look container.
func (f *Files) createLook(ctx context.Context, snap string) (string, error) {
	if err := f.E.SnapshotWhole(ctx, snap); err != nil {
		return "", err
	}
	labels := f.E.LookLabels(snap)
	// A volume held in the image is read where the image holds it.
	var mounts []mount.Mount
	if in, err := f.E.SnapshotVolumeInImage(ctx, snap); err != nil {
		return "", err
	} else if !in {
		mounts = []mount.Mount{{Type: mount.TypeVolume, Source: f.E.SnapVolume(snap), Target: f.E.VolumePath(), ReadOnly: true}}
	}
	cctx, cancel := short(ctx)
	defer cancel()
	res, err := f.E.Client().ContainerCreate(cctx, client.ContainerCreateOptions{Image: f.E.SnapImage(snap),
		Config: &container.Config{Entrypoint: []string{lookEntrypoint}, Labels: labels, NetworkDisabled: true},
		HostConfig: &container.HostConfig{NetworkMode: "none", SecurityOpt: []string{"no-new-privileges"},
			Mounts: mounts}})
	if err != nil {
		return "", f.E.Wrap(err, "make the container that reads the snapshot's files")
	}
	return res.ID, nil
}

// side is where a read looks: a snapshot's look container, or a box's own
// container now.
type side struct {
	id  string
	now bool
}

// sideOf gives the side of a snapshot (against nil: the box now, whose
// container is the snapshot's guest) and the function that lets it go.
func (f *Files) sideOf(ctx context.Context, ref providers.SnapshotRef, now bool) (side, func(), error) {
	if now {
		if _, err := f.E.MustInspect(ctx, ref.Guest); err != nil {
			return side{}, nil, err
		}
		return side{id: ref.Guest.Ref, now: true}, func() {}, nil
	}
	id, done, err := f.LookAt(ctx, ref.Ref)
	if err != nil {
		return side{}, nil, err
	}
	return side{id: id}, done, nil
}

// where names a side in words: "in the box now", or "".
func (s side) where() string {
	if s.now {
		return " in the box now"
	}
	return ""
}

// lookRel cleans a caller's path ("." for the top) and refuses one that
// climbs with ".." (guestfiles.Parts).
func lookRel(p string) (string, error) {
	parts, err := guestfiles.Parts(p)
	if err != nil {
		return "", err
	}
	return guestfiles.Rel(parts), nil
}

// stat stats rel on a side, through no link (guestfiles.Resolve): each
// folder on the way is statted first and must be a folder, not a link. The
// engine answers a path's last part as it is (a link is not followed
// there).
func (f *Files) stat(ctx context.Context, s side, rel string) (container.PathStat, error) {
	statPath := func(p string) (container.PathStat, error) {
		cctx, cancel := short(ctx)
		defer cancel()
		res, err := f.E.Client().ContainerStatPath(cctx, s.id, client.ContainerStatPathOptions{Path: p})
		if err != nil {
			return res.Stat, notFoundOr(f.E.Wrap(err, "read "+rel+s.where()), rel, s)
		}
		return res.Stat, nil
	}
	if rel == "." {
		return statPath("/")
	}
	parts := strings.Split(rel, "/")
	return guestfiles.Resolve(parts, s.where(), func(st container.PathStat) string { return kindOf(st.Mode) },
		func(k int) (container.PathStat, error) { return statPath("/" + strings.Join(parts[:k+1], "/")) })
}

// notFoundOr says an engine's "not found" as the path not found on the
// side, without the engine's words; any other error as it is.
func notFoundOr(err error, rel string, s side) error {
	if errors.Is(err, providers.ErrNotFound) {
		return guestfiles.NotFound(rel, s.where())
	}
	return err
}

// kindOf names what a stat is: "file", "dir", "link" or "other".
func kindOf(m os.FileMode) string {
	switch {
	case m&os.ModeSymlink != 0:
		return "link"
	case m.IsDir():
		return "dir"
	case m.IsRegular():
		return "file"
	}
	return "other"
}

// permOf is a mode's permission bits and setuid, setgid and sticky, as
// FileEntry.Mode holds them.
func permOf(m os.FileMode) uint32 {
	v := uint32(m.Perm())
	if m&os.ModeSetuid != 0 {
		v |= 0o4000
	}
	if m&os.ModeSetgid != 0 {
		v |= 0o2000
	}
	if m&os.ModeSticky != 0 {
		v |= 0o1000
	}
	return v
}

// statEntry is a stat as a FileEntry at rel.
func statEntry(rel string, st container.PathStat) providers.FileEntry {
	e := providers.FileEntry{Path: rel, Type: kindOf(st.Mode), Mode: permOf(st.Mode), ModTime: st.Mtime.UTC()}
	if e.Type == "file" {
		e.Size = st.Size
	}
	return e
}

// walked is one entry of the engine's stream: where it is, and, for a
// hard link, the path of the entry it is a second name of (whose content
// it has; the stream gives content only once).
type walked struct {
	providers.FileEntry
	sameAs string
}

// Entry is one path of a look container's files, relative to its root:
// its type ("file", "dir", "link", "other"), a link's target, the path a
// hard link shares its content with, and a file's size.
type Entry struct {
	Path, Type, Target, SameAs string
	Size                       int64
}

// WalkLook streams every entry of a look container's files but the
// engine's own, each folder before what it holds, the stream at a file's
// content.
func (f *Files) WalkLook(ctx context.Context, look string, fn func(e Entry, content io.Reader) error) error {
	return f.walk(ctx, side{id: look}, ".", func(w walked, content io.Reader) error {
		if w.Path == "." || engineOwn(w.Path) {
			return nil
		}
		return fn(Entry{Path: w.Path, Type: w.Type, Target: w.Target, SameAs: w.sameAs, Size: w.Size}, content)
	})
}

// walk streams everything under rel on a side (rel first, then each folder
// before what it holds) and calls fn with each entry, the stream positioned
// at a file's content. An entry whose name leaves rel ends the walk with an
// error.
func (f *Files) walk(ctx context.Context, s side, rel string, fn func(w walked, content io.Reader) error) error {
	src := "/" + rel
	if rel == "." {
		src = "/"
	}
	res, err := f.E.Client().CopyFromContainer(ctx, s.id, client.CopyFromContainerOptions{SourcePath: src})
	if err != nil {
		return notFoundOr(f.E.Wrap(err, "read "+rel+s.where()), rel, s)
	}
	defer func() { _ = res.Content.Close() }()
	tr := tar.NewReader(res.Content)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s%s: %w", rel, s.where(), err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		p, ok := placed(rel, h.Name)
		if !ok {
			return fmt.Errorf("read %s%s: the engine's stream holds an entry named %q, outside it", rel, s.where(), h.Name)
		}
		w := walked{FileEntry: providers.FileEntry{Path: p, Mode: uint32(h.Mode & 0o7777), ModTime: h.ModTime.UTC()}}
		switch h.Typeflag {
		case tar.TypeReg:
			w.Type, w.Size = "file", h.Size
		case tar.TypeLink:
			same, ok := placed(rel, h.Linkname)
			if !ok {
				return fmt.Errorf("read %s%s: the engine's stream holds a hard link to %q, outside it", rel, s.where(), h.Linkname)
			}
			w.Type, w.sameAs = "file", same
		case tar.TypeDir:
			w.Type = "dir"
		case tar.TypeSymlink:
			w.Type, w.Target = "link", h.Linkname
		default:
			w.Type = "other"
		}
		if err := fn(w, tr); err != nil {
			return err
		}
	}
}

// placed gives the path inside the box of an entry of rel's stream: the
// engine names rel's own entry by rel's last part (the top by "/"), and
// what it holds under that.
func placed(rel, name string) (string, bool) {
	if rel == "." {
		n := strings.TrimLeft(name, "/")
		if n == "" {
			return ".", true
		}
		if !local(n) {
			return "", false
		}
		return path.Clean(n), true
	}
	n := strings.TrimSuffix(name, "/")
	if !local(n) {
		return "", false
	}
	n = path.Clean(n)
	base := path.Base(rel)
	if n == base {
		return rel, true
	}
	rest, ok := strings.CutPrefix(n, base+"/")
	if !ok {
		return "", false
	}
	return rel + "/" + rest, true
}

// local says whether a stream's name stays where it is put: relative, and
// never climbing.
func local(n string) bool {
	if n == "" || strings.HasPrefix(n, "/") {
		return false
	}
	for _, part := range strings.Split(n, "/") {
		if part == ".." {
			return false
		}
	}
	return true
}

// ListFiles lists one folder of a snapshot, from its look container.
func (f *Files) ListFiles(ctx context.Context, ref providers.SnapshotRef, dir string) ([]providers.FileEntry, error) {
	rel, err := lookRel(dir)
	if err != nil {
		return nil, err
	}
	s, done, err := f.sideOf(ctx, ref, false)
	if err != nil {
		return nil, fmt.Errorf("browse: %w", err)
	}
	defer done()
	st, err := f.stat(ctx, s, rel)
	if err != nil {
		return nil, err
	}
	if err := guestfiles.FolderOnly(rel, kindOf(st.Mode), st.LinkTarget); err != nil {
		return nil, err
	}
	ws, err := f.entries(ctx, s, rel, func(w walked) bool { return w.Path != rel && path.Dir(w.Path) == rel })
	if err != nil {
		return nil, err
	}
	out := make([]providers.FileEntry, 0, len(ws))
	for _, w := range ws {
		out = append(out, w.FileEntry)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// openOn opens one regular file on a side to be read: its entry and its
// content, which the engine gives as a one-entry stream.
func (f *Files) openOn(ctx context.Context, s side, rel string) (io.ReadCloser, providers.FileEntry, error) {
	if rel == "." {
		return nil, providers.FileEntry{}, &providers.RefusedError{Why: "The box's top folder is not a file"}
	}
	st, err := f.stat(ctx, s, rel)
	if err != nil {
		return nil, providers.FileEntry{}, err
	}
	e := statEntry(rel, st)
	if err := guestfiles.FileOnly(rel, s.where(), e.Type, st.LinkTarget); err != nil {
		return nil, e, err
	}
	res, err := f.E.Client().CopyFromContainer(ctx, s.id, client.CopyFromContainerOptions{SourcePath: "/" + rel})
	if err != nil {
		return nil, e, f.E.Wrap(err, "read "+rel+s.where())
	}
	tr := tar.NewReader(res.Content)
	h, err := tr.Next()
	if err != nil {
		_ = res.Content.Close()
		return nil, e, fmt.Errorf("read %s%s: %w", rel, s.where(), err)
	}
	if h.Typeflag != tar.TypeReg || h.Name != path.Base(rel) {
		_ = res.Content.Close()
		return nil, e, &providers.RefusedError{Why: fmt.Sprintf("%s%s changed while read: it is no longer a file", rel, s.where())}
	}
	e.Size, e.Mode, e.ModTime = h.Size, uint32(h.Mode&0o7777), h.ModTime.UTC()
	return &fileReader{r: tr, c: res.Content}, e, nil
}

// fileReader is one file's content from the engine's stream: the tar
// reader stops at its recorded size, and a stream cut short is a read
// error.
type fileReader struct {
	r io.Reader
	c io.Closer
}

func (f *fileReader) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *fileReader) Close() error               { return f.c.Close() }

// readOn reads one regular file on a side, of at most limit bytes; a larger
// one is refused in words before its content is read, and one that grows
// past the limit while read is cut off (guestfiles.ReadAtMost).
func (f *Files) readOn(ctx context.Context, s side, rel string, limit int64, why string) ([]byte, providers.FileEntry, error) {
	rc, e, err := f.openOn(ctx, s, rel)
	if err != nil {
		return nil, e, err
	}
	defer rc.Close()
	data, err := guestfiles.ReadAtMost(rc, rel, s.where(), e.Size, limit, why)
	if err != nil {
		return nil, e, err
	}
	return data, e, nil
}

// ReadFile writes one file of a snapshot, of at most providers.MaxReadBytes,
// to w.
func (f *Files) ReadFile(ctx context.Context, ref providers.SnapshotRef, p string, w io.Writer) (providers.FileEntry, error) {
	rel, err := lookRel(p)
	if err != nil {
		return providers.FileEntry{}, err
	}
	s, done, err := f.sideOf(ctx, ref, false)
	if err != nil {
		return providers.FileEntry{}, fmt.Errorf("download: %w", err)
	}
	defer done()
	data, e, err := f.readOn(ctx, s, rel, providers.MaxReadBytes, guestfiles.ReadAllows)
	if err != nil {
		return providers.FileEntry{}, err
	}
	if _, err := w.Write(data); err != nil {
		return providers.FileEntry{}, fmt.Errorf("download %s: %w", rel, err)
	}
	return e, nil
}

// OpenFile opens one regular file of a snapshot, of any size, to be
// streamed; the look container stays until it is closed.
func (f *Files) OpenFile(ctx context.Context, ref providers.SnapshotRef, p string) (io.ReadCloser, providers.FileEntry, error) {
	rel, err := lookRel(p)
	if err != nil {
		return nil, providers.FileEntry{}, err
	}
	s, done, err := f.sideOf(ctx, ref, false)
	if err != nil {
		return nil, providers.FileEntry{}, fmt.Errorf("download: %w", err)
	}
	rc, e, err := f.openOn(ctx, s, rel)
	if err != nil {
		done()
		return nil, providers.FileEntry{}, err
	}
	return guestfiles.CloseThen(rc, done), e, nil
}

// WalkFiles calls fn with every entry of a snapshot under dir, dir first,
// each folder before what it holds (in the engine's walk order: by name
// within each folder). The look container stays while fn runs, so that
// fn's OpenFile of each file reads the same one.
func (f *Files) WalkFiles(ctx context.Context, ref providers.SnapshotRef, dir string, fn func(providers.FileEntry) error) error {
	rel, err := lookRel(dir)
	if err != nil {
		return err
	}
	s, done, err := f.sideOf(ctx, ref, false)
	if err != nil {
		return fmt.Errorf("download: %w", err)
	}
	defer done()
	st, err := f.stat(ctx, s, rel)
	if err != nil {
		return err
	}
	if kindOf(st.Mode) != "dir" {
		return fn(statEntry(rel, st))
	}
	ws, err := f.entries(ctx, s, rel, func(walked) bool { return true })
	if err != nil {
		return err
	}
	for _, w := range ws {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(w.FileEntry); err != nil {
			return err
		}
	}
	return nil
}

// entries lists the entries under rel on a side that keep says to keep, in
// the engine's walk order, at most guestfiles.MaxEntries of them: what a walk
// holds in memory is their names, never their content. The engine locks a
// container while it streams from it, so the stream ends before anything
// else is asked of it (a hard link's size, the caller's reads).
func (f *Files) entries(ctx context.Context, s side, rel string, keep func(walked) bool) ([]walked, error) {
	var out []walked
	err := f.walk(ctx, s, rel, func(w walked, _ io.Reader) error {
		if !keep(w) {
			return nil
		}
		if len(out) >= guestfiles.MaxEntries {
			return guestfiles.TooMany(s.where())
		}
		out = append(out, w)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range out {
		if out[i].sameAs != "" {
			// A second name of a file met earlier in the stream, which
			// gives no size for it: its size is that file's.
			st, err := f.stat(ctx, s, out[i].Path)
			if err != nil {
				return nil, err
			}
			out[i].Size = st.Size
		}
	}
	return out, nil
}

// DiffFile compares one text file of the snapshot with the same path in
// another snapshot, or in the box's container now (against nil); a side
// without the path reads as /dev/null (guestfiles.DiffFile).
func (f *Files) DiffFile(ctx context.Context, ref providers.SnapshotRef, against *providers.SnapshotRef, p string) (string, error) {
	rel, err := lookRel(p)
	if err != nil {
		return "", err
	}
	return guestfiles.DiffFile(ref, against, rel, func(r providers.SnapshotRef, now bool) ([]byte, bool, error) {
		s, done, err := f.sideOf(ctx, r, now)
		if err != nil {
			return nil, false, fmt.Errorf("compare: %w", err)
		}
		defer done()
		data, _, err := f.readOn(ctx, s, rel, providers.MaxDiffBytes, guestfiles.DiffAllows)
		if errors.Is(err, providers.ErrNotFound) {
			return nil, true, nil
		}
		return data, false, err
	})
}

// seen is one path of a side, as a comparison holds it: a file by its
// content's hash, never its bytes.
type seen struct {
	providers.FileEntry
	hash [sha256.Size]byte
}

// collect walks a whole side, hashing each file's content as the stream
// goes by, and gives its entries sorted by path. A hard link has the hash
// and size of the file it is a second name of.
func (f *Files) collect(ctx context.Context, s side) ([]seen, error) {
	var out []seen
	at := map[string]int{}
	err := f.walk(ctx, s, ".", func(w walked, content io.Reader) error {
		if len(out) >= guestfiles.MaxEntries {
			return guestfiles.TooMany(s.where())
		}
		e := seen{FileEntry: w.FileEntry}
		switch {
		case w.sameAs != "":
			if i, ok := at[w.sameAs]; ok {
				e.Size, e.hash = out[i].Size, out[i].hash
			}
		case w.Type == "file":
			h := sha256.New()
			if _, err := io.Copy(h, content); err != nil {
				return fmt.Errorf("read %s%s: %w", w.Path, s.where(), err)
			}
			copy(e.hash[:], h.Sum(nil))
			at[w.Path] = len(out)
		}
		if !engineOwn(e.Path) {
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// engineOwn says whether a path is one the engine writes in every
// container it makes (not the box's own files), left out of comparisons.
func engineOwn(p string) bool {
	switch p {
	case ".dockerenv", "etc/hosts", "etc/hostname", "etc/resolv.conf":
		return true
	}
	return false
}

// CompareFiles lists what differs between a snapshot and another snapshot,
// or the box's container now (against nil): both sides are read whole
// through the engine and compared by type, permission bits, a link's
// target and a file's content.
func (f *Files) CompareFiles(ctx context.Context, ref providers.SnapshotRef, against *providers.SnapshotRef) ([]providers.FileChange, error) {
	sides := []struct {
		ref providers.SnapshotRef
		now bool
	}{{ref, false}, {ref, true}}
	if against != nil {
		sides[1].ref, sides[1].now = *against, false
	}
	var lists [2][]seen
	for i, sd := range sides {
		s, done, err := f.sideOf(ctx, sd.ref, sd.now)
		if err != nil {
			return nil, fmt.Errorf("compare: %w", err)
		}
		lists[i], err = f.collect(ctx, s)
		done()
		if err != nil {
			return nil, fmt.Errorf("compare: %w", err)
		}
	}
	return providers.CompareListings(lists[0], lists[1], func(e *seen) providers.Listed {
		return providers.Listed{Path: e.Path, Type: e.Type, Size: e.Size}
	}, func(o, n *seen) bool {
		return o.Type == n.Type && o.Mode == n.Mode && o.Target == n.Target && o.Size == n.Size && o.hash == n.hash
	}), nil
}
