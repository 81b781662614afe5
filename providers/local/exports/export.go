package exports

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/confined"
	"github.com/boxsnap/boxsnap/providers/local/process"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// Exports answers the exports, imports and scrubs of a local backend.
var _ providers.Exporter = (*Exports)(nil)

// Exports answers the local backend's exports, imports and the scrub of a
// share copy (providers.Exporter): a snapshot written as an archive of its
// manifest and content, archives checked whole and published as
// snapshots of an import group, and a copy with secrets and targets taken
// out.
type Exports struct {
	*store.Store
	Log       *slog.Logger
	Id        string
	Install   string
	MaxImport int64
	// Mu is the backend's lock, held while an import publishes.
	Mu *sync.Mutex

	// What the backend's takes, restores and boxes answer.
	LoadUsable  func(ref providers.SnapshotRef) (*store.Manifest, error)
	MarkDamaged func(id, why string)
	SyncContent func() error
	Storage     func() (providers.Storage, error)
	ImportUser  func(group string) (process.RunAs, error)
	GuestOf     func(box, kind string) providers.Guest
}

// An archive is a gzip-compressed tar holding, in this order:
//
//	boxsnap-archive.json  what it is: the snapshot's ID, member name, parent,
//	                      the base it leaves content out against, and the
//	                      SHA-256 of its manifest
//	manifest.json         the snapshot's manifest, byte for byte as stored
//	content/<sha256>      each piece of content it carries
//
// The label is not carried: labels belong to an install, and an import
// writes its own.
const (
	ArchiveMeta     = "boxsnap-archive.json"
	ArchiveManifest = "manifest.json"
	ArchiveContent  = "content/"
	ArchiveFormat   = 1
)

// DefaultMaxImportBytes bounds the content one import's batch unpacks, as
// the upload itself is bounded: an archive is compressed, and a few MB of it
// can unpack to many GB.
const DefaultMaxImportBytes = 64 << 30

type ArchiveInfo struct {
	Format      int    `json:"format"`
	ID          string `json:"id"`
	Name        string `json:"name"`
	Parent      string `json:"parent,omitempty"`
	Base        string `json:"base,omitempty"`
	ManifestSum string `json:"manifestSha256"`
}

// ExportSnapshot writes one snapshot as one archive: its manifest and its
// content, or, with opts.Base, only the content the base lacks.
func (b *Exports) ExportSnapshot(ctx context.Context, ref providers.SnapshotRef, opts providers.ExportOptions, w io.Writer) error {
	m, err := b.LoadUsable(ref)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	raw, err := os.ReadFile(filepath.Join(b.SnapDir(m.ID), store.FileManifest))
	if err != nil {
		return fmt.Errorf("export snapshot %s: %w", m.ID, err)
	}
	skip := map[string]int64{}
	if opts.Scrub != nil {
		if err := store.CheckID("copy", opts.AsID); err != nil {
			return err
		}
		c, rep, err := b.scrubManifest(ctx, m, *opts.Scrub)
		if err != nil {
			return fmt.Errorf("export a copy of %s: %w", m.ID, err)
		}
		if len(rep.Blocked) > 0 {
			return &providers.BlockedError{Blocked: rep.Blocked}
		}
		c.ID, c.Parent = opts.AsID, ""
		if raw, err = store.EncodeChecked(c); err != nil {
			return fmt.Errorf("export a copy of %s: %w", m.ID, err)
		}
		m, opts.Base = c, nil
	}
	info := ArchiveInfo{Format: ArchiveFormat, ID: m.ID, Name: opts.Name, Parent: m.Parent, ManifestSum: store.Sha256Hex(raw)}
	if info.Name == "" {
		info.Name = m.ID
	}
	if opts.Base != nil {
		bm, err := b.LoadUsable(*opts.Base)
		if err != nil {
			return fmt.Errorf("export against base: %w", err)
		}
		skip = bm.Hashes()
		info.Base = bm.ID
	}
	lock, err := b.LockStore(ctx, false)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	// Content is mostly compressed or random already: the fastest level
	// keeps an export near the disk's speed.
	zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	now := time.Now().UTC()
	put := func(name string, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(data)), ModTime: now, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	meta, _ := json.Marshal(info)
	if err := put(ArchiveMeta, meta); err != nil {
		return fmt.Errorf("export snapshot %s: %w", m.ID, err)
	}
	if err := put(ArchiveManifest, raw); err != nil {
		return fmt.Errorf("export snapshot %s: %w", m.ID, err)
	}
	hashes := make([]string, 0)
	for h := range m.Hashes() {
		if _, ok := skip[h]; !ok {
			hashes = append(hashes, h)
		}
	}
	sort.Strings(hashes)
	for _, h := range hashes {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := b.exportContent(tw, h, now); err != nil {
			if errors.Is(err, store.ErrDamaged) {
				b.MarkDamaged(m.ID, "Its content is damaged on disk: "+err.Error())
			}
			return fmt.Errorf("export snapshot %s: %w", m.ID, err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("export snapshot %s: %w", m.ID, err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("export snapshot %s: %w", m.ID, err)
	}
	return nil
}

// exportContent streams one content file into the archive, checking its hash
// as it goes.
func (b *Exports) exportContent(tw *tar.Writer, h string, now time.Time) error {
	f, err := os.Open(b.ContentPath(h))
	if err != nil {
		return fmt.Errorf("%w: content %s is missing", store.ErrDamaged, h[:12])
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: ArchiveContent + h, Mode: 0o444, Size: fi.Size(), ModTime: now, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	sum := sha256.New()
	if _, err := io.Copy(io.MultiWriter(tw, sum), f); err != nil {
		return err
	}
	if hex.EncodeToString(sum.Sum(nil)) != h {
		return fmt.Errorf("%w: content %s does not match its hash", store.ErrDamaged, h[:12])
	}
	return nil
}

// group is the members of one import group: member name to snapshot ID.
type group struct {
	Members map[string]string `json:"members"`
}

// staged is one archive of a batch, unpacked and checked.
type staged struct {
	info     ArchiveInfo
	raw      []byte
	m        store.Manifest
	already  bool
	position int
}

// ImportSnapshots unpacks a batch of archives, in any order, validates every
// one before publishing any, then publishes them for the box named by
// opts.Group. Content an incremental archive leaves out is found in the batch
// first, then in the store. Ancestry is each manifest's own parent.
//
// An archive comes from elsewhere, and its manifest is what a restore, as
// root, writes: each one is checked whole as it is read (unpack), before any
// of its content is kept, and made this host's (mapImported).
func (b *Exports) ImportSnapshots(ctx context.Context, opts providers.ImportOptions, archives []io.Reader) ([]providers.ImportedSnapshot, error) {
	if err := store.CheckID("group", opts.Group); err != nil {
		return nil, err
	}
	who, err := b.ImportUser(opts.Group)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	stage, err := os.MkdirTemp(b.Path(store.DirTmp), "import-")
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	defer os.RemoveAll(stage)
	batch, budget, err := b.unpackBatch(ctx, stage, archives, who)
	if err != nil {
		return nil, err
	}

	lock, err := b.LockStore(ctx, false)
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	b.Mu.Lock()
	defer b.Mu.Unlock()
	g, err := b.readGroup(opts.Group)
	if err != nil {
		return nil, err
	}
	unique, err := b.checkBatch(batch, g, opts.Group)
	if err != nil {
		return nil, err
	}
	if err := b.checkBatchContent(stage, unique); err != nil {
		return nil, err
	}
	if err := b.checkImportRoom(opts.RoomPercent, budget); err != nil {
		return nil, err
	}
	return b.publishBatch(ctx, stage, unique, g, opts.Group)
}

// importRefused is an import's refusal, in words that say nothing was
// imported.
func importRefused(format string, a ...any) error {
	return &providers.RefusedError{Why: fmt.Sprintf(format, a...) + ". Nothing was imported."}
}

// unpackBatch unpacks each archive into stage, checking it whole as it is
// read, with what the batch unpacks bounded and checked against the
// store's free room as it comes, so an archive cannot fill the disk while
// staged. It gives the staged archives and the budget they used.
func (b *Exports) unpackBatch(ctx context.Context, stage string, archives []io.Reader, who process.RunAs) ([]*staged, *importBudget, error) {
	if err := os.Mkdir(filepath.Join(stage, "content"), 0o700); err != nil {
		return nil, nil, fmt.Errorf("import: %w", err)
	}
	budget := &importBudget{max: b.MaxImport, free: func() (int64, error) {
		st, err := b.Storage()
		return st.FreeBytes, err
	}}
	var batch []*staged
	for i, r := range archives {
		s, err := b.unpack(ctx, r, stage, i+1, who, budget)
		if err != nil {
			var re *providers.RefusedError
			if errors.As(err, &re) {
				return nil, nil, importRefused("Archive %d of the batch: %s", i+1, re.Why)
			}
			return nil, nil, fmt.Errorf("import archive %d: %w", i+1, err)
		}
		batch = append(batch, s)
	}
	return batch, budget, nil
}

// readGroup reads the group's members, none when it has no file yet.
func (b *Exports) readGroup(name string) (group, error) {
	g := group{Members: map[string]string{}}
	if data, err := os.ReadFile(b.GroupFile(name)); err == nil {
		if err := json.Unmarshal(data, &g); err != nil {
			return g, fmt.Errorf("import: read group %s: %w", name, err)
		}
		if g.Members == nil {
			g.Members = map[string]string{}
		}
	}
	return g, nil
}

// checkBatch validates the whole batch before publishing anything: a
// snapshot twice in it holds the same content, one already held here holds
// it too (and is marked already), and no name is given to two snapshots,
// in the batch or in group g. It gives the batch's snapshots, each once.
func (b *Exports) checkBatch(batch []*staged, g group, groupName string) ([]*staged, error) {
	byID := map[string]*staged{}
	names := map[string]string{}
	var unique []*staged
	for _, s := range batch {
		if o := byID[s.info.ID]; o != nil {
			if o.info.ManifestSum != s.info.ManifestSum {
				return nil, importRefused("Archives %d and %d both hold snapshot %s, with different content", o.position, s.position, s.info.ID)
			}
			continue
		}
		byID[s.info.ID] = s
		if raw, err := os.ReadFile(filepath.Join(b.SnapDir(s.info.ID), store.FileManifest)); err == nil {
			// Held as the archive has it (taken here), or as an import of
			// it made it this host's.
			if sum := store.Sha256Hex(raw); sum != s.info.ManifestSum && sum != store.Sha256Hex(s.raw) {
				return nil, importRefused("Snapshot %s (archive %d) is already held here with different content", s.info.ID, s.position)
			}
			s.already = true
		} else if _, err := os.Lstat(b.SnapDir(s.info.ID)); err == nil {
			return nil, importRefused("Snapshot %s (archive %d) is already here, incomplete: delete it first", s.info.ID, s.position)
		}
		if other, ok := names[s.info.Name]; ok && other != s.info.ID {
			return nil, importRefused("The name %q is given to both %s and %s in this batch", s.info.Name, other, s.info.ID)
		}
		if other, ok := g.Members[s.info.Name]; ok && other != s.info.ID {
			return nil, importRefused("The name %q is already used by snapshot %s in group %s", s.info.Name, other, groupName)
		}
		names[s.info.Name] = s.info.ID
		unique = append(unique, s)
	}
	return unique, nil
}

// checkBatchContent checks that every piece of content the batch's
// snapshots name is in the batch, staged, or in the store.
func (b *Exports) checkBatchContent(stage string, unique []*staged) error {
	for _, s := range unique {
		for h, size := range s.m.Hashes() {
			if fi, err := os.Lstat(filepath.Join(stage, "content", h)); err == nil && fi.Size() == size {
				continue
			}
			if fi, err := os.Lstat(b.ContentPath(h)); err == nil && fi.Size() == size {
				continue
			}
			return importRefused("Snapshot %s (archive %d) needs content %s that neither the batch nor this store holds: add the archive of its base to the batch", s.info.ID, s.position, h[:12])
		}
	}
	return nil
}

// checkImportRoom checks the room, with the batch's content staged on the
// store's file system, before anything is published: an import that
// leaves the store past roomPercent full is refused.
func (b *Exports) checkImportRoom(roomPercent int, budget *importBudget) error {
	if roomPercent <= 0 || budget.used <= 0 {
		return nil
	}
	st, err := b.Storage()
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	if st.PercentFull > float64(roomPercent) {
		return importRefused("With its %s of content the store would be %.0f%% full, past the %d%% at which new snapshots are refused",
			providers.GB(budget.used), st.PercentFull, roomPercent)
	}
	return nil
}

// publishBatch publishes the batch: its staged content first, then each
// snapshot's folder, then group g with them. It gives what it published,
// up to a failure.
func (b *Exports) publishBatch(ctx context.Context, stage string, unique []*staged, g group, groupName string) ([]providers.ImportedSnapshot, error) {
	staged, _ := os.ReadDir(filepath.Join(stage, "content"))
	for _, c := range staged {
		dst := b.ContentPath(c.Name())
		if _, err := os.Lstat(dst); err == nil {
			continue
		}
		if err := os.Rename(filepath.Join(stage, "content", c.Name()), dst); err != nil {
			return nil, fmt.Errorf("import: %w", err)
		}
	}
	if err := b.SyncContent(); err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	var out []providers.ImportedSnapshot
	for _, s := range unique {
		if !s.already {
			if err := b.publishImported(ctx, s, groupName); err != nil {
				return out, fmt.Errorf("import snapshot %s: %w", s.info.ID, err)
			}
		}
		g.Members[s.info.Name] = s.info.ID
		out = append(out, providers.ImportedSnapshot{
			Ref:     providers.SnapshotRef{ID: s.info.ID, Ref: s.info.ID, Guest: b.GuestOf(groupName, s.m.Guest.Kind), Storage: b.Id, Where: "current"},
			Name:    s.info.Name,
			Parent:  s.m.Parent,
			Holds:   providers.HoldsDisk,
			Already: s.already,
		})
	}
	data, _ := json.Marshal(g)
	if err := store.WriteFileAtomic(b.GroupFile(groupName), data, 0o600); err != nil {
		return out, fmt.Errorf("import: write group %s: %w", groupName, err)
	}
	return out, nil
}

// unpack reads one archive into the staging folder. Its parts come in the
// order ExportSnapshot writes them, so that its manifest is checked whole
// (checkImported) before a byte of its content is kept: content no entry
// uses, or of another size than its entries give, is refused as it comes,
// and the rest is kept only once it matches its hash.
//
// A stream that breaks part-way (cut short, damaged) or goes on past its
// tar's end is the archive's fault, refused in words, whatever part of it
// was being read (providers.ArchiveStream); a write that fails stays the
// host's.
func (b *Exports) unpack(ctx context.Context, r io.Reader, stage string, pos int, who process.RunAs, budget *importBudget) (*staged, error) {
	zs, err := providers.OpenArchive(r)
	if err != nil {
		return nil, err
	}
	s, err := b.unpackTar(ctx, tar.NewReader(zs), stage, pos, who, budget)
	if err == nil {
		err = zs.End()
	}
	if err != nil {
		return nil, zs.Fault(err)
	}
	return s, nil
}

// unpackTar reads one archive's tar into the staging folder (unpack).
func (b *Exports) unpackTar(ctx context.Context, tr *tar.Reader, stage string, pos int, who process.RunAs, budget *importBudget) (*staged, error) {
	s := &staged{position: pos}
	gotInfo := false
	var want map[string]int64 // the content the manifest uses, by hash
	refuse := func(format string, a ...any) error {
		return &providers.RefusedError{Why: fmt.Sprintf(format, a...)}
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err // the stream's or the tar's fault: unpack says it
		}
		switch {
		case hdr.Name == ArchiveMeta:
			if gotInfo || s.raw != nil {
				return nil, refuse("it holds a second description, after its first or its manifest")
			}
			data, err := io.ReadAll(io.LimitReader(tr, 1<<20))
			if err != nil {
				return nil, err
			}
			if err := json.Unmarshal(data, &s.info); err != nil || s.info.Format != ArchiveFormat {
				return nil, refuse("its description is unreadable or of another format")
			}
			gotInfo = true
		case hdr.Name == ArchiveManifest:
			if !gotInfo {
				return nil, refuse("its manifest comes before its description")
			}
			if s.raw != nil {
				return nil, refuse("it holds two manifests")
			}
			// Refused by its header, before it is read into memory.
			if hdr.Size > confined.MaxManifestBytes {
				return nil, refuse("its manifest is %d bytes, more than the %d MiB a manifest may be", hdr.Size, confined.MaxManifestBytes>>20)
			}
			data, err := io.ReadAll(io.LimitReader(tr, confined.MaxManifestBytes+1))
			if err != nil {
				return nil, err
			}
			if len(data) > confined.MaxManifestBytes {
				return nil, refuse("its manifest is more than the %d MiB a manifest may be", confined.MaxManifestBytes>>20)
			}
			s.raw = data
			if err := checkImported(s, who); err != nil {
				return nil, err
			}
			want = s.m.Hashes()
		case strings.HasPrefix(hdr.Name, ArchiveContent):
			h := strings.TrimPrefix(hdr.Name, ArchiveContent)
			if !confined.IsHash(h) {
				return nil, refuse("it holds an unexpected file %q", hdr.Name)
			}
			if want == nil {
				return nil, refuse("it holds content %s before its manifest", h[:12])
			}
			size, ok := want[h]
			if !ok {
				return nil, refuse("it carries content %s that no entry of its manifest uses", h[:12])
			}
			if hdr.Size != size {
				return nil, refuse("its content %s is %d bytes, not the %d its manifest gives", h[:12], hdr.Size, size)
			}
			if err := budget.take(hdr.Size); err != nil {
				return nil, err
			}
			if err := b.stageContent(tr, filepath.Join(stage, "content"), h); err != nil {
				return nil, err
			}
		default:
			return nil, refuse("it holds an unexpected file %q", hdr.Name)
		}
	}
	if !gotInfo || s.raw == nil {
		return nil, refuse("it lacks its description or its manifest")
	}
	if s.info.Name == "" {
		s.info.Name = s.info.ID
	}
	if err := store.CheckID("member name", s.info.Name); err != nil {
		return nil, err
	}
	return s, nil
}

// checkImported checks an archive's manifest (s.raw) against its
// description and its bounds, decodes it into s.m, checks every entry
// (checkEntries) and makes it this host's (mapImported): s.raw becomes what
// the store keeps.
func checkImported(s *staged, who process.RunAs) error {
	refuse := func(format string, a ...any) error {
		return &providers.RefusedError{Why: fmt.Sprintf(format, a...)}
	}
	if err := store.CheckID("snapshot", s.info.ID); err != nil {
		return err
	}
	if store.Sha256Hex(s.raw) != s.info.ManifestSum {
		return refuse("the manifest of snapshot %s does not match its checksum", s.info.ID)
	}
	body, err := store.CheckedBody(s.raw, store.FileManifest)
	if err != nil {
		return refuse("the manifest of snapshot %s is damaged (%v)", s.info.ID, err)
	}
	if err := confined.CheckEntryCount(body); err != nil {
		return refuse("the manifest of snapshot %s is refused: %v", s.info.ID, err)
	}
	if err := store.DecodeBody(body, &s.m, store.FileManifest); err != nil {
		return refuse("the manifest of snapshot %s is damaged (%v)", s.info.ID, err)
	}
	if s.m.ID != s.info.ID {
		return refuse("its manifest is of snapshot %s, not %s", s.m.ID, s.info.ID)
	}
	if s.m.Parent != "" {
		if err := store.CheckID("parent snapshot", s.m.Parent); err != nil {
			return err
		}
	}
	if err := confined.CheckEntries(s.m.Entries); err != nil {
		return refuse("the manifest of snapshot %s is refused: %v", s.info.ID, err)
	}
	mapImported(&s.m, who)
	if s.raw, err = store.EncodeChecked(&s.m); err != nil {
		return fmt.Errorf("the manifest of snapshot %s: %w", s.info.ID, err)
	}
	return nil
}

// mapImported makes an imported manifest this host's: every path owned by
// the box's user (another host's owners mean nothing here, and root's would
// hand root's files to the box's process), no setuid, setgid or sticky bit
// (a box's folder is one other users of the host may reach), no stat cache
// of another host's files, and its entries in order, a folder before what
// it holds.
func mapImported(m *store.Manifest, who process.RunAs) {
	for i := range m.Entries {
		e := &m.Entries[i]
		e.UID, e.GID = who.Uid, who.Gid
		e.Mode &= uint32(fs.ModePerm)
		e.Ino, e.CTime = 0, 0
	}
	store.SortEntries(m.Entries)
}

// importBudget is what one import's batch may still unpack: at most max in
// all, and never more than the store has free.
type importBudget struct {
	max, used int64
	free      func() (int64, error)
}

// take counts n more bytes of content, refusing them past the bound or the
// store's free room.
func (ib *importBudget) take(n int64) error {
	if ib.used+n > ib.max {
		return &providers.RefusedError{Why: fmt.Sprintf("the batch unpacks to more than the %s of content an import may hold", binaryUnits(ib.max))}
	}
	if free, err := ib.free(); err != nil {
		return err
	} else if n > free {
		return &providers.RefusedError{Why: providers.StoreFullWords(free, n), TryAgain: true}
	}
	ib.used += n
	return nil
}

// binaryUnits says a bound in GiB, MiB or KiB, whole where it is.
func binaryUnits(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func (b *Exports) stageContent(r io.Reader, dir, h string) error {
	dst := filepath.Join(dir, h)
	if _, err := os.Lstat(dst); err == nil {
		_, err := io.Copy(io.Discard, r)
		return err
	}
	f, err := os.CreateTemp(dir, ".in-")
	if err != nil {
		return err
	}
	defer func() { f.Close(); _ = os.Remove(f.Name()) }()
	sum := sha256.New()
	if _, err := io.Copy(io.MultiWriter(f, sum), r); err != nil {
		return err // the archive's fault or the host's: unpack tells them apart
	}
	if hex.EncodeToString(sum.Sum(nil)) != h {
		return &providers.RefusedError{Why: fmt.Sprintf("its content %s does not match its hash", h[:12])}
	}
	if err := f.Chmod(0o444); err != nil {
		return err
	}
	return os.Rename(f.Name(), dst)
}

// publishImported writes an imported snapshot's folder: its manifest byte for
// byte, and a label of this install for the group's box.
func (b *Exports) publishImported(ctx context.Context, s *staged, group string) error {
	tmp := b.Path(store.DirSnapshots, store.TakingPrefix+s.info.ID+"-"+store.RandomSuffix())
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			_ = os.RemoveAll(tmp)
		}
	}()
	lab := store.Label{Label: providers.Label{Install: b.Install, Box: group, Snapshot: s.info.ID, ResetVersion: s.m.ResetVersion}, TakenAt: s.m.CapturedAt}
	ldata, err := store.EncodeChecked(lab)
	if err != nil {
		return err
	}
	if err := store.WriteFileAtomic(filepath.Join(tmp, store.FileManifest), s.raw, 0o600); err != nil {
		return err
	}
	if err := store.WriteFileAtomic(filepath.Join(tmp, store.FileLabel), ldata, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, b.SnapDir(s.info.ID)); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return &providers.RefusedError{Why: fmt.Sprintf("Snapshot %s appeared while it was imported", s.info.ID)}
		}
		return err
	}
	ok = true
	return store.SyncDir(b.Path(store.DirSnapshots))
}
