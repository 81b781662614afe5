package qemu

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/boxsnap/boxsnap/providers"
)

// importsDirName is the folder, in the backend's folder, of imported
// snapshots: each a whole qcow2 (<ID>.qcow2) and what it is (<ID>.json,
// written last, so a snapshot is there only once both are).
const importsDirName = "imports"

// importedPrefix starts an imported snapshot's backend reference.
const importedPrefix = "imported/"

// storageImported names where imported snapshots live: a qcow2 each.
const storageImported = "qcow2-file"

// DefaultMaxImportBytes bounds the disks one import's batch unpacks, as
// the upload itself is bounded: an archive is compressed.
const DefaultMaxImportBytes = 64 << 30

// validID is what an ID in an archive may be: it names files here.
var validID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// importedMeta is what an imported snapshot is, beside its disk.
type importedMeta struct {
	archiveInfo
	// Group is the box it was imported into.
	Group string `json:"group"`
	// KeptUntil is its keep date, nil when it is not kept: written by
	// SetKeptUntil, read back by the reconcile (heldImported).
	KeptUntil *time.Time `json:"keptUntil,omitempty"`
}

func importedID(ref string) (string, bool) {
	id, ok := strings.CutPrefix(ref, importedPrefix)
	return id, ok && validID.MatchString(id)
}

func (b *archives) importsDir() string { return filepath.Join(b.cfg.Dir, importsDirName) }

func (b *archives) importedDisk(id string) string {
	return filepath.Join(b.importsDir(), id+".qcow2")
}

func (b *archives) importedMetaPath(id string) string {
	return filepath.Join(b.importsDir(), id+".json")
}

// importedMeta reads an imported snapshot's record; a missing one wraps
// ErrNotFound.
func (b *archives) importedMeta(id string) (importedMeta, error) {
	var m importedMeta
	raw, err := os.ReadFile(b.importedMetaPath(id))
	if errors.Is(err, os.ErrNotExist) {
		return m, fmt.Errorf("imported snapshot %s: %w", id, providers.ErrNotFound)
	}
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, fmt.Errorf("read imported snapshot %s: %w", id, err)
	}
	return m, nil
}

// staged is one archive read into the work folder and checked.
type staged struct {
	info archiveInfo
	disk string
}

// ImportSnapshots reads a batch of archives, in any order, into a private
// folder, checks each whole (its members, its disk's hash, and the qcow2
// itself: no backing file but the base it names, no external data, a size
// a disk may have), makes each incremental one whole over its base (from
// the batch, or imported here before), then publishes them all as
// snapshots of opts.Group. A refusal names what was wrong, and nothing is
// published.
func (b *archives) ImportSnapshots(ctx context.Context, opts providers.ImportOptions, archives []io.Reader) ([]providers.ImportedSnapshot, error) {
	if !validID.MatchString(opts.Group) {
		return nil, &providers.RefusedError{Why: fmt.Sprintf("%q is not a box's ID.", opts.Group)}
	}
	b.importMu.Lock()
	defer b.importMu.Unlock()
	tmp, err := b.workDir("import-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	batch := map[string]*staged{}
	var total int64
	for i, r := range archives {
		s, err := b.stage(ctx, r, tmp, DefaultMaxImportBytes-total)
		var re *providers.RefusedError
		if errors.As(err, &re) {
			return nil, &providers.RefusedError{Why: importRefusedWords(i+1, re.Why)}
		}
		if err != nil {
			return nil, fmt.Errorf("archive %d: %w", i+1, err)
		}
		if _, dup := batch[s.info.ID]; dup {
			return nil, &providers.RefusedError{Why: fmt.Sprintf("The batch holds the snapshot %s twice.", s.info.ID)}
		}
		batch[s.info.ID] = s
		total += s.info.DiskBytes
	}
	if err := b.roomFor(total, opts.RoomPercent); err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(batch))
	for id := range batch {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var out []providers.ImportedSnapshot
	whole := map[string]string{}
	for _, id := range ids {
		s := batch[id]
		// An export carries a snapshot's disk only, so what it holds here
		// is its disk, whatever its source held.
		imp := providers.ImportedSnapshot{Ref: b.importedRef(opts.Group, id), Name: s.info.Name, Parent: s.info.Parent, Holds: providers.HoldsDisk}
		if m, err := b.importedMeta(id); err == nil {
			if m.Group != opts.Group {
				return nil, &providers.RefusedError{Why: fmt.Sprintf("The snapshot %s was imported here into another box.", id)}
			}
			imp.Already = true
		} else if !errors.Is(err, providers.ErrNotFound) {
			return nil, err
		}
		if _, err := b.makeWhole(ctx, opts.Group, id, batch, whole, nil); err != nil {
			return nil, err
		}
		out = append(out, imp)
	}
	if err := b.publish(ctx, opts.Group, ids, batch, whole); err != nil {
		return nil, err
	}
	return out, nil
}

// importedRef is an imported snapshot's reference, its guest the box's.
func (b *archives) importedRef(group, id string) providers.SnapshotRef {
	return providers.SnapshotRef{ID: id, Ref: importedPrefix + id, Guest: b.guest(domainName(group)), Storage: storageImported, Where: "current"}
}

// stage reads one archive into dir and checks it: its first member what it
// is, its second its disk, nothing else; the disk's hash and size as the
// first says, at most limit bytes, and its qcow2 (checkQcow2). A stream
// that breaks anywhere (cut short, damaged) or goes on past its tar's end
// is the archive's fault, refused in words whatever part of it was being
// read (providers.ArchiveStream); a write that fails stays the host's.
func (b *archives) stage(ctx context.Context, r io.Reader, dir string, limit int64) (*staged, error) {
	zs, err := providers.OpenArchive(r)
	if err != nil {
		return nil, err
	}
	s, err := b.stageTar(tar.NewReader(zs), dir, limit)
	if err == nil {
		err = zs.End()
	}
	if err != nil {
		return nil, zs.Fault(err)
	}
	if _, err := checkQcow2(ctx, s.disk, s.info.Base != ""); err != nil {
		return nil, fmt.Errorf("%s: %w", s.info.ID, err)
	}
	return s, nil
}

// stageTar reads one archive's tar into dir (stage). An error of the tar
// or of its stream is answered as it is, for stage to say in words.
func (b *archives) stageTar(tr *tar.Reader, dir string, limit int64) (*staged, error) {
	hd, err := tr.Next()
	if err != nil {
		return nil, err
	}
	if hd.Name != archiveMeta || hd.Typeflag != tar.TypeReg || hd.Size > maxMetaBytes {
		return nil, &providers.RefusedError{Why: "It is not a QEMU snapshot's archive: it does not begin with what it is."}
	}
	raw, err := io.ReadAll(io.LimitReader(tr, maxMetaBytes))
	if err != nil {
		return nil, err
	}
	var info archiveInfo
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&info); err != nil || info.Kind != archiveKind {
		return nil, &providers.RefusedError{Why: "It is not a QEMU snapshot's archive."}
	}
	if err := b.checkInfo(info); err != nil {
		return nil, err
	}
	hd, err = tr.Next()
	if err == io.EOF {
		return nil, &providers.RefusedError{Why: fmt.Sprintf("The archive of %s does not hold its disk.", info.ID)}
	}
	if err != nil {
		return nil, err
	}
	if hd.Name != archiveDisk || hd.Typeflag != tar.TypeReg {
		return nil, &providers.RefusedError{Why: fmt.Sprintf("The archive of %s does not hold its disk next.", info.ID)}
	}
	if hd.Size != info.DiskBytes || hd.Size > limit {
		return nil, &providers.RefusedError{Why: fmt.Sprintf("The disk of %s is %d bytes, not the %d it says, or past the %d an import may unpack.", info.ID, hd.Size, info.DiskBytes, limit)}
	}
	disk := filepath.Join(dir, info.ID+".qcow2")
	f, err := os.OpenFile(disk, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(f, h), io.LimitReader(tr, hd.Size))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("unpack the disk of %s: %w", info.ID, err)
	}
	if hex.EncodeToString(h.Sum(nil)) != info.DiskSha256 {
		return nil, &providers.RefusedError{Why: fmt.Sprintf("The disk of %s does not match its hash.", info.ID)}
	}
	switch _, err := tr.Next(); {
	case err == nil:
		return nil, &providers.RefusedError{Why: fmt.Sprintf("The archive of %s holds more than its disk.", info.ID)}
	case err != io.EOF:
		return nil, err
	}
	return &staged{info: info, disk: disk}, nil
}

// checkInfo checks what an archive says it is: its IDs name files here, its
// template is one of this backend's.
func (b *archives) checkInfo(info archiveInfo) error {
	if info.Format != archiveFormat {
		return &providers.RefusedError{Why: fmt.Sprintf("The archive's format %d is not the %d this boxsnap reads.", info.Format, archiveFormat)}
	}
	for _, id := range []string{info.ID, info.Parent, info.Base} {
		if id != "" && !validID.MatchString(id) {
			return &providers.RefusedError{Why: fmt.Sprintf("%q is not a snapshot's ID.", id)}
		}
	}
	if info.ID == "" || info.Base == info.ID || len(info.Name) > 200 || !validID.MatchString(info.DiskSha256) {
		return &providers.RefusedError{Why: "The archive does not say whole what it is."}
	}
	if _, ok := b.cfg.Templates[info.Template]; !ok {
		return &providers.RefusedError{Why: fmt.Sprintf("The QEMU backend %s has no template %q, which the snapshot %s was made from.", b.cfg.ID, info.Template, info.ID)}
	}
	return nil
}

// makeWhole makes the staged disk of id whole, once: an incremental one is
// given its base's whole disk as its backing file (the base from the batch,
// made whole first, or one of the same box here: baseHere), checked with
// it, and copied into a qcow2 of its own. It answers the whole disk's path.
func (b *archives) makeWhole(ctx context.Context, group, id string, batch map[string]*staged, whole map[string]string, seen map[string]bool) (string, error) {
	if p, ok := whole[id]; ok {
		return p, nil
	}
	s := batch[id]
	if s.info.Base == "" {
		if err := qemuImg(ctx, "check", "-q", "-f", "qcow2", s.disk); err != nil {
			return "", hostile("%s fails qemu-img check: %v", id, err)
		}
		whole[id] = s.disk
		return s.disk, nil
	}
	if seen == nil {
		seen = map[string]bool{}
	}
	if seen[id] {
		return "", &providers.RefusedError{Why: fmt.Sprintf("The snapshots' bases go round in a circle at %s.", id)}
	}
	seen[id] = true
	var base string
	if _, ok := batch[s.info.Base]; ok {
		p, err := b.makeWhole(ctx, group, s.info.Base, batch, whole, seen)
		if err != nil {
			return "", err
		}
		base = p
	} else {
		p, err := b.baseHere(ctx, group, s.info.Base, filepath.Dir(s.disk))
		if err != nil {
			return "", err
		}
		base = p
	}
	if err := qemuImg(ctx, "rebase", "-q", "-u", "-f", "qcow2", "-F", "qcow2", "-b", base, s.disk); err != nil {
		return "", err
	}
	if err := qemuImg(ctx, "check", "-q", "-f", "qcow2", s.disk); err != nil {
		return "", hostile("%s fails qemu-img check: %v", id, err)
	}
	out := s.disk + ".whole"
	if err := qemuImg(ctx, "convert", "-f", "qcow2", "-O", "qcow2", s.disk, out); err != nil {
		return "", err
	}
	whole[id] = out
	return out, nil
}

// baseHere is the whole disk of base, a snapshot of the box group already
// here: imported into it before, or inside its guest's disk (extracted into
// dir). A snapshot of another box is never a base: its disk is not the
// importer's to read.
func (b *archives) baseHere(ctx context.Context, group, base, dir string) (string, error) {
	missing := &providers.RefusedError{Why: fmt.Sprintf("The archive leaves out what its base %s holds, which is neither in the batch nor a snapshot of this box here: import it too.", base)}
	if m, err := b.importedMeta(base); err == nil {
		if m.Group != group {
			return "", missing
		}
		return b.importedDisk(base), nil
	}
	src, err := b.source(ctx, providers.SnapshotRef{ID: base, Ref: base, Guest: b.guest(domainName(group))})
	if errors.Is(err, providers.ErrNotFound) {
		return "", missing
	}
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, base+".base.qcow2")
	if err := qemuImg(ctx, append(src.convertArgs(), "-O", "qcow2", src.file, p)...); err != nil {
		return "", err
	}
	return p, nil
}

// publish moves each snapshot's whole disk into the imports folder, then
// writes its record; one already there is left as it is.
func (b *archives) publish(ctx context.Context, group string, ids []string, batch map[string]*staged, whole map[string]string) error {
	if err := os.MkdirAll(b.importsDir(), 0o700); err != nil {
		return fmt.Errorf("make %s: %w", b.importsDir(), err)
	}
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, err := os.Stat(b.importedMetaPath(id)); err == nil {
			continue
		}
		if err := os.Rename(whole[id], b.importedDisk(id)); err != nil {
			return fmt.Errorf("publish %s: %w", id, err)
		}
		m := importedMeta{archiveInfo: batch[id].info, Group: group}
		m.Base = "" // made whole here
		if err := b.writeImported(m); err != nil {
			return fmt.Errorf("publish %s: %w", id, err)
		}
		b.log.InfoContext(ctx, "snapshot imported", "snapshot", id, "box", group)
	}
	return nil
}

// writeImported writes an imported snapshot's record whole or not at all.
func (b *archives) writeImported(m importedMeta) error {
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	part := b.importedMetaPath(m.ID) + ".part"
	if err := os.WriteFile(part, raw, 0o600); err != nil {
		return err
	}
	return os.Rename(part, b.importedMetaPath(m.ID))
}

// roomFor refuses a batch whose disks do not fit in the backend's folder,
// or take it past roomPercent of its file system.
func (b *archives) roomFor(bytes int64, roomPercent int) error {
	r, err := providers.ReadRoom(b.cfg.Dir)
	if err != nil {
		return err
	}
	size, free := r.Size(), r.Free
	// Making an incremental disk whole writes it again.
	need := 2 * bytes
	if need > free {
		return &providers.RefusedError{Why: fmt.Sprintf("The batch needs %d bytes and the QEMU backend's folder has %d free.", need, free)}
	}
	if roomPercent > 0 && size > 0 && (size-free+need)*100/size > int64(roomPercent) {
		return &providers.RefusedError{Why: fmt.Sprintf("The batch would fill the QEMU backend's folder past the room setting of %d%%.", roomPercent)}
	}
	return nil
}

// importedSnapshots lists the imported snapshots' records.
func (b *archives) importedSnapshots() ([]importedMeta, error) {
	names, err := filepath.Glob(filepath.Join(b.importsDir(), "*.json"))
	if err != nil {
		return nil, err
	}
	var out []importedMeta
	for _, n := range names {
		id := strings.TrimSuffix(filepath.Base(n), ".json")
		if !validID.MatchString(id) {
			continue
		}
		m, err := b.importedMeta(id)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// removeImported deletes an imported snapshot: its record first, so a cut
// short removal leaves no snapshot half there.
func (b *archives) removeImported(id string) error {
	for _, p := range []string{b.importedMetaPath(id), b.importedDisk(id)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// importRefusedWords says why archive pos of a batch was refused, and that
// nothing was imported: "Archive 2 of the batch: it is cut short: …".
func importRefusedWords(pos int, why string) string {
	why = strings.TrimSuffix(why, ".")
	if r, n := utf8.DecodeRuneInString(why); n > 0 && !(len(why) > n && unicode.IsUpper(rune(why[n]))) {
		why = string(unicode.ToLower(r)) + why[n:]
	}
	return fmt.Sprintf("Archive %d of the batch: %s. Nothing was imported.", pos, why)
}
