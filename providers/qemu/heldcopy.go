package qemu

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
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

var _ providers.HeldCopier = (*Backend)(nil)

// writeHeld writes a held copy's record whole or not at all.
func (b heldCopies) writeHeld(id string, m heldMeta) error {
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
func (b heldCopies) HoldCopy(ctx context.Context, source providers.SnapshotRef, label providers.Label, step providers.HeldCopyStep, rec providers.Recorder) (providers.HeldCopyProgress, error) {
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
func (b heldCopies) dropImportedSource(source providers.SnapshotRef) error {
	if imp, ok := importedID(source.Ref); ok && imp == source.ID {
		return b.removeImported(imp)
	}
	return nil
}

// AdoptCopy refuses: a QEMU held copy is forked into a new box, never made
// its box's guest again (its plan offers no restore).
func (b heldCopies) AdoptCopy(context.Context, providers.SnapshotRef, providers.BoxIdentity, providers.GuestIdentity, providers.HeldCopyStep, providers.Recorder) (providers.Guest, error) {
	return providers.Guest{}, &providers.RefusedError{Why: heldRestoreWhy}
}
