package qemu

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// A kept snapshot outlives its box's release as a held copy: the snapshot's
// disk, read out of the box's qcow2 (qemu-img convert -l, as a fork reads
// it, while the guest runs or not), as a qcow2 of its own in the imports
// folder, <ID>.held.qcow2, beside what it is, <ID>.held.json. A held copy
// is a file, never a domain: nothing can start it, and a fork from it makes
// a new domain whose identity reset runs at its first boot. It keeps the
// snapshot's disk only: the memory of a snapshot taken with it belongs to
// the QEMU that ran it and goes with the box.
//
// Its record is written first, saying it is not whole; then the disk is
// copied into <ID>.held.qcow2.part and renamed; then the record is written
// again, whole. A copy cut short at any step is listed incomplete, made
// again (never trusted) by the next HoldCopy, and removed by a delete.
const (
	heldSuffix = ".held"
	// storageHeld names where held copies live: a qcow2 each.
	storageHeld = "qcow2-held-copy"
	// KeepPerGiB is a held copy's estimate per GiB of the box's disk: a
	// qemu-img convert of the snapshot out of the box's qcow2 wrote 139 MiB
	// in 0.27 s here (under load), so a disk written whole takes about 2 s
	// a GiB.
	KeepPerGiB = 2 * time.Second
	keepFloor  = 2 * time.Second
	// keepNoMemoryWhy is the plan's word on Keep for a snapshot with memory.
	keepNoMemoryWhy = "The held copy keeps the snapshot's disk, not its memory: a fork from it boots afresh."
	heldRestoreWhy  = "A held copy is never restored in place: fork it into a new box."
	// heldWhere is a held copy's SnapshotRef.Where, as the core records it.
	heldWhere = "held-copy"
)

var _ providers.HeldCopier = (*Backend)(nil)

// heldMeta is what a held copy is, beside its disk.
type heldMeta struct {
	Label    providers.Label `json:"label"`
	Template string          `json:"template"`
	Reset    int             `json:"resetVersion,omitempty"`
	Parent   string          `json:"parent,omitempty"`
	TakenAt  time.Time       `json:"takenAt"`
	// Whole is set once the copy's disk is all there.
	Whole bool `json:"whole"`
}

func (b *Backend) heldDisk(id string) string {
	return filepath.Join(b.importsDir(), id+heldSuffix+".qcow2")
}

func (b *Backend) heldMetaPath(id string) string {
	return filepath.Join(b.importsDir(), id+heldSuffix+".json")
}

// heldGuest is the guest a held copy's reference names: its file.
func (b *Backend) heldGuest(id string) providers.Guest {
	return b.guest(id + heldSuffix + ".qcow2")
}

// heldRef is the reference of the held copy of the snapshot id, taken as ref.
func (b *Backend) heldRef(id, ref string) providers.SnapshotRef {
	return providers.SnapshotRef{ID: id, Ref: ref, Guest: b.heldGuest(id), Storage: storageHeld, Where: heldWhere}
}

// readHeld reads a held copy's record; a missing one wraps ErrNotFound.
func (b *Backend) readHeld(id string) (heldMeta, error) {
	var m heldMeta
	if !validID.MatchString(id) {
		return m, fmt.Errorf("held copy %q: %w", id, providers.ErrNotFound)
	}
	raw, err := os.ReadFile(b.heldMetaPath(id))
	if errors.Is(err, os.ErrNotExist) {
		return m, fmt.Errorf("held copy of %s: %w", id, providers.ErrNotFound)
	}
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, fmt.Errorf("read the held copy of %s: %w", id, err)
	}
	return m, nil
}

// writeHeld writes a held copy's record whole or not at all.
func (b *Backend) writeHeld(id string, m heldMeta) error {
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	part := b.heldMetaPath(id) + ".part"
	if err := os.WriteFile(part, raw, 0o600); err != nil {
		return fmt.Errorf("write the held copy of %s: %w", id, err)
	}
	if err := os.Rename(part, b.heldMetaPath(id)); err != nil {
		return fmt.Errorf("write the held copy of %s: %w", id, err)
	}
	return nil
}

// HoldCopy makes the held copy of the snapshot source, in one step: its
// clone step copies the snapshot's disk out of the box's qcow2 and answers
// the copy made whole (Template set: a file needs no disarm and is never
// started, so those steps have nothing to do). A copy already whole is
// answered as it is; one cut short is removed and made again (Remade). The
// copy of an imported snapshot replaces its qcow2.
func (b *Backend) HoldCopy(ctx context.Context, source providers.SnapshotRef, label providers.Label, step providers.HeldCopyStep, rec providers.Recorder) (providers.HeldCopyProgress, error) {
	id := source.ID
	if !validID.MatchString(id) || source.Where == heldWhere {
		return providers.HeldCopyProgress{}, &providers.RefusedError{Why: fmt.Sprintf("%q is not a snapshot a held copy can be made of.", id)}
	}
	cp := b.heldRef(id, source.Ref)
	done := providers.HeldCopyProgress{Step: step, Done: true, Copy: &cp, Template: true, ResetVersion: label.ResetVersion}
	switch step {
	case providers.HeldCopyClone, providers.HeldCopyCloned:
	case providers.HeldCopyDisarm, providers.HeldCopyTemplate:
		return done, nil
	default:
		return providers.HeldCopyProgress{}, fmt.Errorf("held copy of %s: no step %q", id, step)
	}
	b.importMu.Lock()
	defer b.importMu.Unlock()
	m, err := b.readHeld(id)
	switch {
	case err == nil && m.Whole:
		done.ResetVersion = m.Reset
		return done, b.dropImportedSource(source)
	case err == nil:
		done.Remade = true
	case !errors.Is(err, providers.ErrNotFound):
		return providers.HeldCopyProgress{}, err
	}
	src, err := b.source(ctx, source)
	if err != nil {
		return providers.HeldCopyProgress{}, err
	}
	if err := os.MkdirAll(b.importsDir(), 0o700); err != nil {
		return providers.HeldCopyProgress{}, fmt.Errorf("make %s: %w", b.importsDir(), err)
	}
	disk := b.heldDisk(id)
	for _, p := range []string{disk + ".part", disk} {
		if err := os.Remove(p); err == nil {
			done.Remade = true
		} else if !errors.Is(err, os.ErrNotExist) {
			return providers.HeldCopyProgress{}, err
		}
	}
	label.Held = source.Ref
	if label.SnapshotAt == nil {
		at := src.takenAt
		label.SnapshotAt = &at
	}
	if label.Kind == "" {
		label.Kind = KindLinux
	}
	m = heldMeta{Label: label, Template: src.template, Reset: src.reset, Parent: src.parent, TakenAt: src.takenAt}
	if err := b.writeHeld(id, m); err != nil {
		return providers.HeldCopyProgress{}, err
	}
	b.at("hold:recorded")
	start := time.Now()
	if err := qemuImg(ctx, append(src.convertArgs(), "-O", "qcow2", src.file, disk+".part")...); err != nil {
		return providers.HeldCopyProgress{}, fmt.Errorf("copy %s out of %s: %w", id, source.Guest.Ref, err)
	}
	b.at("hold:copied")
	if err := os.Rename(disk+".part", disk); err != nil {
		return providers.HeldCopyProgress{}, err
	}
	b.at("hold:renamed")
	m.Whole = true
	if err := b.writeHeld(id, m); err != nil {
		return providers.HeldCopyProgress{}, err
	}
	if err := b.dropImportedSource(source); err != nil {
		return providers.HeldCopyProgress{}, err
	}
	b.log.InfoContext(ctx, "held copy made", "snapshot", id, "from", source.Guest.Ref, "took", time.Since(start), "remade", done.Remade)
	done.ResetVersion = m.Reset
	return done, nil
}

// dropImportedSource removes the qcow2 of an imported snapshot once its
// held copy is whole: it is outside the box's disk, so the box's release
// would leave it, and the held copy stands for it now.
func (b *Backend) dropImportedSource(source providers.SnapshotRef) error {
	if imp, ok := importedID(source.Ref); ok && imp == source.ID {
		return b.removeImported(imp)
	}
	return nil
}

// AdoptCopy refuses: a QEMU held copy is forked into a new box, never made
// its box's guest again (its plan offers no restore).
func (b *Backend) AdoptCopy(context.Context, providers.SnapshotRef, providers.BoxIdentity, providers.GuestIdentity, providers.HeldCopyStep, providers.Recorder) (providers.Guest, error) {
	return providers.Guest{}, &providers.RefusedError{Why: heldRestoreWhy}
}

// heldSource is where a held copy's disk is read from; one not whole wraps
// ErrNotFound, since it holds nothing to read yet.
func (b *Backend) heldSource(id string) (diskSource, error) {
	m, err := b.readHeld(id)
	if err != nil {
		return diskSource{}, err
	}
	if !m.Whole {
		return diskSource{}, fmt.Errorf("the held copy of %s was cut short: %w", id, providers.ErrNotFound)
	}
	return diskSource{file: b.heldDisk(id), template: m.Template, reset: m.Reset, parent: m.Parent, takenAt: m.TakenAt}, nil
}

// removeHeld deletes the held copy of id: its record first, so a removal
// cut short leaves no copy half there; one already gone is removed.
func (b *Backend) removeHeld(id string) error {
	if !validID.MatchString(id) {
		return nil
	}
	b.importMu.Lock()
	defer b.importMu.Unlock()
	base := b.heldDisk(id)
	for _, p := range []string{b.heldMetaPath(id), b.heldMetaPath(id) + ".part", base + ".part", base} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove the held copy of %s: %w", id, err)
		}
	}
	return nil
}

// dropHalfHeld removes the held copy of id if it is not whole: deleting a
// snapshot sweeps what a copy of it cut short left.
func (b *Backend) dropHalfHeld(id string) error {
	m, err := b.readHeld(id)
	if errors.Is(err, providers.ErrNotFound) {
		if _, serr := os.Stat(b.heldDisk(id) + ".part"); serr != nil {
			return nil
		}
	} else if err != nil || m.Whole {
		return err
	}
	return b.removeHeld(id)
}

// heldCopies lists the held copies as HeldSnapshots: one not whole is
// listed incomplete, never as what it holds.
func (b *Backend) heldCopies() ([]providers.HeldSnapshot, error) {
	names, err := filepath.Glob(filepath.Join(b.importsDir(), "*"+heldSuffix+".json"))
	if err != nil {
		return nil, err
	}
	var out []providers.HeldSnapshot
	for _, n := range names {
		id := strings.TrimSuffix(filepath.Base(n), heldSuffix+".json")
		m, err := b.readHeld(id)
		if errors.Is(err, providers.ErrNotFound) {
			continue // removed since the listing, or not a name of ours
		}
		if err != nil {
			return nil, err
		}
		if m.Label.Install != b.cfg.Install {
			continue
		}
		h := providers.HeldSnapshot{Ref: b.heldRef(id, m.Label.Held), Label: m.Label, Storage: storageHeld, TakenAt: m.TakenAt,
			Holds: providers.HoldsDisk, Parent: m.Parent}
		if !m.Whole {
			h.Incomplete = true
			h.Error = fmt.Sprintf("its held copy %s was cut short before it was whole, so it is not trusted", h.Ref.Guest.Ref)
		}
		out = append(out, h)
	}
	return out, nil
}

// planHeld is the plan for a held copy: it forks, and is never restored in
// place or kept again (it is the kept snapshot). Its box may be gone, so
// no domain is read.
func (b *Backend) planHeld(snap providers.SnapshotRef) (providers.SnapshotPlan, error) {
	plan := providers.SnapshotPlan{Storage: providers.Storage{Name: storageHeld, Type: "qcow2"}}
	plan.Take = providers.TakePlan{Why: "A held copy's box is not here to take."}
	plan.Keep = providers.KeepPlan{Way: providers.KeepsHeldCopy}
	plan.Restore = providers.RestorePlan{Way: providers.WayNone, Why: heldRestoreWhy, Undo: providers.UndoNone, Order: diskOrder, RestartsProcesses: true}
	plan.Fork = providers.ForkPlan{OK: true, About: ForkAbout}
	if _, err := b.heldSource(snap.ID); errors.Is(err, providers.ErrNotFound) {
		plan.Fork = providers.ForkPlan{Why: "The held copy is not whole in the QEMU backend's folder."}
	} else if err != nil {
		return providers.SnapshotPlan{}, err
	}
	if fi, err := os.Stat(b.heldDisk(snap.ID)); err == nil {
		n := fi.Size()
		plan.Fork.Bytes = &n
	}
	return plan, nil
}

// keepPlan says what keeping a snapshot of a box whose disk holds diskBytes
// costs: a copy of its disk, never of its memory.
func keepPlan(diskBytes int64, memory bool) providers.KeepPlan {
	about := max(keepFloor, time.Duration(float64(KeepPerGiB)*float64(diskBytes)/bytesPerGiB))
	p := providers.KeepPlan{Way: providers.KeepsHeldCopy, About: &about}
	if diskBytes > 0 {
		p.Bytes = &diskBytes
	}
	if memory {
		p.Why = keepNoMemoryWhy
	}
	return p
}
