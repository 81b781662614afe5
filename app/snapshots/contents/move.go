package contents

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// Box log event kinds of moving snapshots in and out of boxsnap.
const (
	EvExported      = "exported"
	EvImported      = "imported"
	EvShared        = "share-code-made"
	EvShareRevoked  = "share-code-revoked"
	EvShareRedeemed = "share-code-redeemed"
)

// An export file (".boxsnap") moves snapshots of one box, a history, to
// another install. It is a tar holding, per snapshot, the backend's own archive cut in parts of
// exportPart bytes (so it streams with no temporary copy), then
// boxsnap-export.json: the box, each snapshot's record and the size and
// SHA-256 of its archive. The backend's archive in turn names every piece of
// content by its SHA-256 and carries its manifest's checksum, so an import
// checks every byte before it publishes anything.
const (
	// ExportManifestName is the export file's manifest, its last member.
	ExportManifestName = "boxsnap-export.json"
	// ExportExtension is what an export file's name ends with.
	ExportExtension = ".boxsnap"
	exportFormat    = 1
	exportPart      = 4 << 20
	exportMember    = "snapshots/"
)

// ExportManifest is what an export file says it holds.
type ExportManifest struct {
	Format     int                `json:"format"`
	Install    string             `json:"install"`
	ExportedAt time.Time          `json:"exportedAt"`
	Box        ExportedBox        `json:"box"`
	Snapshots  []ExportedSnapshot `json:"snapshots"`
}

// ExportedBox is the box an export file's snapshots belong to: an import
// puts them in the box with this ID, made here if it is not.
type ExportedBox struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	System  string `json:"system,omitempty"`
	Backend string `json:"backend"` // the backend's kind, "local"
}

// ExportedSnapshot is one snapshot of an export file: its record, and its
// archive's parts, size and SHA-256.
type ExportedSnapshot struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Note       *string    `json:"note,omitempty"`
	TakenAt    time.Time  `json:"takenAt"`
	CapturedAt *time.Time `json:"capturedAt,omitempty"`
	Holds      string     `json:"holds"`
	ForkSafe   *int       `json:"forkSafe,omitempty"`
	// Base is the snapshot whose content the archive leaves out; it supplies
	// data only, never ancestry.
	Base   string `json:"base,omitempty"`
	Parts  int    `json:"parts"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// ExportRequest asks for one export file of snapshots of one box.
type ExportRequest struct {
	Box       string
	Snapshots []string // names or IDs; at least one
	// Base makes the file incremental against a snapshot the receiver
	// holds: content it holds is left out.
	Base string
}

// Export is an export checked and ready to write: Plan refuses before a
// byte is written, so a page or the API can still answer in words.
type Export struct {
	s        *Contents
	c        snapshots.Caller
	box      *snapshots.Box
	be       snapshots.Backend
	exporter providers.Exporter
	snaps    []*snapshots.Snapshot
	base     *snapshots.Snapshot
}

// FileName is a name for the export file: the box, the newest snapshot's
// date, ".boxsnap".
func (e *Export) FileName() string {
	last := e.snaps[len(e.snaps)-1]
	return fmt.Sprintf("%s-%s%s", e.box.Name, last.TakenAt.UTC().Format("20060102-1504"), ExportExtension)
}

// Box is the box the export is of.
func (e *Export) Box() *snapshots.Box { return e.box }

// PlanExport checks an export: the person only, snapshots of one box that
// are ready, on a backend that exports.
func (s *Contents) PlanExport(ctx context.Context, c snapshots.Caller, req ExportRequest) (*Export, error) {
	if len(req.Snapshots) == 0 {
		return nil, refusal(snapshots.CodeInvalid, nameOneToExportWords)
	}
	b, err := s.k.Box(ctx, c, req.Box)
	if err != nil {
		return nil, err
	}
	if err := snapshots.MayAct(c, snapshots.ActExport, b, nil); err != nil {
		return nil, err
	}
	be, err := s.k.Backend(b.BackendID)
	if err != nil {
		return nil, err
	}
	ex, ok := be.Snap.(providers.Exporter)
	if !ok {
		return nil, refusal(snapshots.CodePlan, cannotExportWords(be.Label))
	}
	e := &Export{s: s, c: c, box: b, be: be, exporter: ex}
	seen := map[string]bool{}
	for _, ref := range req.Snapshots {
		sn, _, err := s.snaps.SnapshotOfBox(ctx, c, b.ID, ref)
		if err != nil {
			return nil, err
		}
		if seen[sn.ID] {
			continue
		}
		seen[sn.ID] = true
		if sn.State != snapshots.StateReady {
			return nil, refusal(snapshots.CodePlan, cannotBeExportedWords(sn.Name, snapshots.StateWords(sn.State)))
		}
		e.snaps = append(e.snaps, sn)
	}
	// Oldest first, so each archive after the first leaves out what the one
	// before it in the file holds.
	sort.SliceStable(e.snaps, func(i, j int) bool { return e.snaps[i].TakenAt.Before(e.snaps[j].TakenAt) })
	if req.Base != "" {
		base, _, err := s.snaps.SnapshotOfBox(ctx, c, b.ID, req.Base)
		if err != nil {
			return nil, err
		}
		if base.State != snapshots.StateReady {
			return nil, refusal(snapshots.CodePlan, cannotBeBaseWords(base.Name, snapshots.StateWords(base.State)))
		}
		if seen[base.ID] {
			return nil, refusal(snapshots.CodeInvalid, exportedAndBaseWords(base.Name))
		}
		e.base = base
	}
	return e, nil
}

// WriteTo writes the export file to w, and records it in the box log.
func (e *Export) WriteTo(ctx context.Context, w io.Writer) (*ExportManifest, error) {
	m := &ExportManifest{Format: exportFormat, Install: e.s.install, ExportedAt: e.s.now().UTC(),
		Box: ExportedBox{ID: e.box.ID, Name: e.box.Name, Kind: e.box.Kind, System: e.box.System, Backend: e.be.Kind}}
	tw := tar.NewWriter(w)
	base := e.base
	for _, sn := range e.snaps {
		var opts providers.ExportOptions
		if sn.ParentID != nil {
			opts.Parent = *sn.ParentID
		}
		if base != nil {
			ref := snapshots.RefOf(base, e.box)
			opts.Base = &ref
		}
		part := newPartWriter(tw, exportMember+sn.ID+".tar.gz", e.s.now())
		if err := e.exporter.ExportSnapshot(ctx, snapshots.RefOf(sn, e.box), opts, part); err != nil {
			return nil, fmt.Errorf("export ‘%s’: %w", sn.Name, err)
		}
		if err := part.Close(); err != nil {
			return nil, fmt.Errorf("export ‘%s’: %w", sn.Name, err)
		}
		es := ExportedSnapshot{ID: sn.ID, Name: sn.Name, Note: sn.Note, TakenAt: sn.TakenAt, CapturedAt: sn.CapturedAt,
			Holds: exportedHolds, ForkSafe: sn.ForkSafe, Parts: part.parts, Size: part.size, SHA256: hex.EncodeToString(part.sum.Sum(nil))}
		if base != nil {
			es.Base = base.ID
		}
		m.Snapshots = append(m.Snapshots, es)
		base = sn
	}
	raw, _ := json.MarshalIndent(m, "", "  ")
	if err := tw.WriteHeader(&tar.Header{Name: ExportManifestName, Mode: 0o644, Size: int64(len(raw)), ModTime: m.ExportedAt, Typeflag: tar.TypeReg}); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if _, err := tw.Write(raw); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	names := make([]string, len(e.snaps))
	for i, sn := range e.snaps {
		names[i] = sn.Name
	}
	baseName := ""
	if e.base != nil {
		baseName = e.base.Name
	}
	words := logExportedWords(names, baseName)
	e.s.k.Log(ctx, e.s.st.Pool, e.box.ID, EvExported, e.c, words, e.snaps[0].ID, "", nil)
	return m, nil
}

// partWriter cuts what is written into tar members of exportPart bytes,
// named name.0000, name.0001 ..., and sums it.
type partWriter struct {
	tw    *tar.Writer
	name  string
	at    time.Time
	buf   []byte
	parts int
	size  int64
	sum   hash.Hash
}

func newPartWriter(tw *tar.Writer, name string, at time.Time) *partWriter {
	return &partWriter{tw: tw, name: name, at: at, buf: make([]byte, 0, exportPart), sum: sha256.New()}
}

func (p *partWriter) Write(b []byte) (int, error) {
	n := len(b)
	p.sum.Write(b)
	p.size += int64(n)
	for len(b) > 0 {
		k := min(exportPart-len(p.buf), len(b))
		p.buf = append(p.buf, b[:k]...)
		b = b[k:]
		if len(p.buf) == exportPart {
			if err := p.flush(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

func (p *partWriter) flush() error {
	hdr := &tar.Header{Name: fmt.Sprintf("%s.%04d", p.name, p.parts), Mode: 0o644, Size: int64(len(p.buf)), ModTime: p.at, Typeflag: tar.TypeReg}
	if err := p.tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := p.tw.Write(p.buf); err != nil {
		return err
	}
	p.parts++
	p.buf = p.buf[:0]
	return nil
}

// Close writes the last part.
func (p *partWriter) Close() error {
	if len(p.buf) > 0 || p.parts == 0 {
		return p.flush()
	}
	return nil
}

// Staged is one export file read into a temporary folder and checked
// against its manifest; Import takes a batch of them. Remove it when done.
type Staged struct {
	// Name is how the file is called in words: its file name, or "file 2".
	Name     string
	Manifest ExportManifest
	dir      string
	files    map[string]string // snapshot ID to its archive's staged path
}

// Remove deletes the staged copy.
func (st *Staged) Remove() {
	if st != nil && st.dir != "" {
		_ = os.RemoveAll(st.dir)
	}
}

var partName = regexp.MustCompile(`^snapshots/(sn[a-z0-9]{12})\.tar\.gz\.([0-9]{4})$`)

// Stage reads one export file from r into a temporary folder, checking each
// snapshot's archive against the size and SHA-256 its manifest gives. A file
// that is damaged, cut short or not an export file is refused naming what is
// wrong; nothing changes.
func (s *Contents) Stage(ctx context.Context, name string, r io.Reader) (*Staged, error) {
	dir, err := os.MkdirTemp(s.tempDir, "import-")
	if err != nil {
		return nil, fmt.Errorf("stage %s: %w", name, err)
	}
	st := &Staged{Name: name, dir: dir, files: map[string]string{}}
	ok := false
	defer func() {
		if !ok {
			st.Remove()
		}
	}()
	spools := map[string]*spool{}
	defer func() {
		for _, g := range spools {
			g.f.Close()
		}
	}()
	if err := st.readExport(ctx, r, spools); err != nil {
		return nil, err
	}
	if err := checkExport(name, &st.Manifest, spools); err != nil {
		return nil, err
	}
	for _, g := range spools {
		if err := g.f.Close(); err != nil {
			return nil, fmt.Errorf("stage %s: %w", name, err)
		}
	}
	spools = nil
	ok = true
	return st, nil
}

// badArchive refuses the export file name, saying what is wrong with it.
func badArchive(name, format string, a ...any) *snapshots.Refusal {
	return refusal(snapshots.CodeInvalid, badArchiveWords(name, fmt.Sprintf(format, a...)))
}

// spool is a snapshot's archive as an export file's parts are staged: its
// file, how many parts and bytes it has had, and their SHA-256.
type spool struct {
	f     *os.File
	parts int
	size  int64
	sum   hash.Hash
}

// readExport reads the export file's tar from r: each part of a
// snapshot's archive, in order, into its spool in st's folder, and then
// its manifest, into st.Manifest, which comes last. It refuses anything
// else, or a file cut short.
//
// A file that breaks part-way (cut short, damaged), that stops where a
// member does short of the tar's end, or that goes on past that end, is
// refused in words, whatever part of it was being read (exportReader); a
// write that fails stays the host's.
func (st *Staged) readExport(ctx context.Context, r io.Reader, spools map[string]*spool) error {
	name := st.Name
	er := &exportReader{r: r}
	tr := tar.NewReader(er)
	sawManifest := false
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return er.broken(name, err)
		}
		if sawManifest {
			return badArchive(name, "it holds %s after its manifest", hdr.Name)
		}
		if hdr.Name == ExportManifestName {
			if err := st.readExportManifest(tr); err != nil {
				return er.broken(name, err)
			}
			sawManifest = true
			continue
		}
		if err := st.spoolPart(hdr, tr, spools); err != nil {
			return er.broken(name, err)
		}
	}
	if err := er.end(name); err != nil {
		return err
	}
	if !sawManifest {
		return badArchive(name, exportNoManifestWords)
	}
	return nil
}

// readExportManifest reads the export file's manifest from tr into
// st.Manifest, refusing one unreadable or of another format; a read that
// fails is readExport's to say.
func (st *Staged) readExportManifest(tr io.Reader) error {
	name := st.Name
	raw, err := io.ReadAll(io.LimitReader(tr, 1<<20))
	if err != nil {
		return fmt.Errorf("stage %s: read its manifest: %w", name, err) // readExport tells the file's fault from the host's
	}
	if err := json.Unmarshal(raw, &st.Manifest); err != nil {
		return badArchive(name, exportManifestWords)
	}
	if st.Manifest.Format != exportFormat {
		return badArchive(name, "it is of format %d; this boxsnap reads format %d", st.Manifest.Format, exportFormat)
	}
	return nil
}

// spoolPart copies the part hdr names, from tr, onto the end of its
// snapshot's spool, made in st's folder for its first part; a part out of
// order, or a file that is no part, is refused, and a copy that fails is
// readExport's to say.
func (st *Staged) spoolPart(hdr *tar.Header, tr io.Reader, spools map[string]*spool) error {
	name := st.Name
	m := partName.FindStringSubmatch(hdr.Name)
	if m == nil || hdr.Typeflag != tar.TypeReg {
		return badArchive(name, "it holds an unexpected file %q", hdr.Name)
	}
	id, n := m[1], m[2]
	g := spools[id]
	if g == nil {
		f, err := os.CreateTemp(st.dir, id+"-")
		if err != nil {
			return fmt.Errorf("stage %s: %w", name, err)
		}
		g = &spool{f: f, sum: sha256.New()}
		spools[id] = g
		st.files[id] = f.Name()
	}
	if want := fmt.Sprintf("%04d", g.parts); n != want {
		return badArchive(name, "part %s of snapshot %s comes where part %s belongs", n, id, want)
	}
	k, err := io.Copy(io.MultiWriter(g.f, g.sum), tr)
	if err != nil {
		return fmt.Errorf("stage %s: %w", name, err) // readExport tells the file's fault from the host's
	}
	g.parts++
	g.size += k
	return nil
}

// checkExport checks the export file's manifest mf against the archives
// staged (spools): a valid box, each snapshot listed with a valid ID,
// name, note and holds, and an archive of the size, parts and SHA-256 it
// gives; no archive that it does not list.
func checkExport(name string, mf *ExportManifest, spools map[string]*spool) error {
	if !snapshots.ValidID(snapshots.PrefixBox, mf.Box.ID) || snapshots.CheckBoxName(mf.Box.Name) != nil || mf.Box.Kind == "" || len(mf.Box.Kind) > 40 || !isPlainWord(mf.Box.Kind) || len(mf.Box.System) > 200 {
		return badArchive(name, "its manifest names no valid box")
	}
	if len(mf.Snapshots) == 0 {
		return badArchive(name, "its manifest lists no snapshot")
	}
	listed := map[string]bool{}
	for _, es := range mf.Snapshots {
		if !snapshots.ValidID(snapshots.PrefixSnapshot, es.ID) {
			return badArchive(name, "its manifest lists a snapshot with no valid ID")
		}
		if _, err := snapshots.CleanName(es.Name); err != nil {
			return badArchive(name, "snapshot %s has no valid name", es.ID)
		}
		if es.Note != nil {
			if _, err := snapshots.CleanNote(*es.Note); err != nil {
				return badArchive(name, "the note of snapshot %s is not a note: %s", es.ID, strings.TrimSuffix(err.Error(), "."))
			}
		}
		if es.Holds != string(providers.HoldsDisk) && es.Holds != string(providers.HoldsDiskAndMemory) {
			return badArchive(name, "snapshot %s holds %q, which boxsnap does not know", es.ID, es.Holds)
		}
		g := spools[es.ID]
		if g == nil {
			return badArchive(name, "the archive of snapshot %s (‘%s’) is missing", es.ID, es.Name)
		}
		if g.parts != es.Parts || g.size != es.Size {
			return badArchive(name, "the archive of snapshot %s (‘%s’) is %d bytes in %d parts; its manifest says %d bytes in %d parts", es.ID, es.Name, g.size, g.parts, es.Size, es.Parts)
		}
		if sum := hex.EncodeToString(g.sum.Sum(nil)); sum != es.SHA256 {
			return badArchive(name, "the archive of snapshot %s (‘%s’) does not match its checksum: it is damaged", es.ID, es.Name)
		}
		listed[es.ID] = true
	}
	for id := range spools {
		if !listed[id] {
			return badArchive(name, "it holds the archive of snapshot %s, which its manifest does not list", id)
		}
	}
	return nil
}

// isPlainWord is a kind's shape: lowercase letters, digits and dashes.
func isPlainWord(s string) bool {
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return true
}

// makeImportedBox makes the guest of a box an import brought here: from the
// batch's one tip (importTip), as a fork is made (a new identity, without
// its sign-in files; restoring that snapshot brings them back), which
// becomes its head; or empty when the backend cannot fork it, or when the
// batch has competing tips: then it has no head until someone chooses.
func (s *Contents) makeImportedBox(ctx context.Context, c snapshots.Caller, box *snapshots.Box, be snapshots.Backend, made []*snapshots.Snapshot, parents map[string]string, res *ImportResult) error {
	tip := importTip(made, parents)
	identity := providers.BoxIdentity{ID: box.ID, Name: box.Name, Kind: box.Kind, Install: s.install, Secrets: s.k.Secrets(ctx)}
	var guest providers.Guest
	var err error
	if tip != nil && tip.ForkSafe != nil {
		guest, err = be.Snap.ForkSnapshot(ctx, snapshots.RefOf(tip, box), identity, nil)
		if err == nil {
			res.MadeFrom = tip.Name
		}
	}
	if res.MadeFrom == "" {
		if guest, err = be.Boxes.Acquire(ctx, providers.BoxSpec{Box: identity}); err != nil {
			return fmt.Errorf("make the imported box %s: %w", box.Name, err)
		}
	}
	// The box was recorded before its guest was made, under its own ID: a
	// backend whose guests have names of their own (a QEMU domain, a Docker
	// container) gives it its guest here; a resumed run finds it given
	// already.
	if guest.Ref != "" && (guest.Ref != box.GuestRef || guest.Host != box.Host) {
		if err := s.st.MoveBoxGuest(ctx, s.st.Pool, db.MoveBoxGuestParams{ID: box.ID, GuestRef: guest.Ref, Host: guest.Host}); err != nil {
			return fmt.Errorf("make the imported box %s: %w", box.Name, err)
		}
		box.GuestRef, box.Host = guest.Ref, guest.Host
	}
	if res.MadeFrom != "" {
		s.snaps.SetHead(ctx, s.st.Pool, box.ID, tip.ID) // its state descends from the tip
	}
	if err := s.st.MoveBoxReady(ctx, s.st.Pool, box.ID); err != nil {
		return fmt.Errorf("make the imported box %s: %w", box.Name, err)
	}
	box.State = snapshots.BoxReady
	s.k.Log(ctx, s.st.Pool, box.ID, snapshots.EvMade, c, logMadeByImportWords(res.MadeFrom), "", "", nil)
	return nil
}

// freeBoxName is name, or name-2, name-3 ... the first no live box has.
func (s *Contents) freeBoxName(ctx context.Context, q db.DBTX, name string) (string, error) {
	base := name
	for i := 2; ; i++ {
		used, err := s.st.MoveBoxLiveName(ctx, q, name)
		if err != nil {
			return "", fmt.Errorf("is the name %s free: %w", name, err)
		}
		if !used {
			return name, nil
		}
		suffix := "-" + strconv.Itoa(i)
		name = base
		if len(name)+len(suffix) > 40 {
			name = strings.TrimRight(name[:40-len(suffix)], "-")
		}
		name += suffix
	}
}
