package qemu

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/digitalocean/go-libvirt"

	"github.com/boxsnap/boxsnap/providers"
)

// A snapshot's keep date is written where the reconcile reads its label
// back from: an internal snapshot's description in libvirt's record of it,
// a held copy's or an imported snapshot's record beside its disk. So a
// keep set, renewed or ended, before its box's release or after, is found
// again as it was when boxsnap's records are lost.

var _ providers.Labeler = (*Backend)(nil)

// SetKeptUntil writes the keep date (nil: not kept) on the snapshot's
// label: a held copy's record, an imported snapshot's record, or an
// internal snapshot's description, redefined in libvirt with the rest of
// its XML as it was.
func (b heldCopies) SetKeptUntil(ctx context.Context, ref providers.SnapshotRef, keptUntil *time.Time) error {
	var until *time.Time
	if keptUntil != nil {
		t := keptUntil.UTC()
		until = &t
	}
	if ref.Where == heldWhere {
		return b.setHeldKeptUntil(ref.ID, until)
	}
	if id, ok := importedID(ref.Ref); ok {
		return b.setImportedKeptUntil(id, until)
	}
	l, d, s, err := b.snapshot(ctx, ref.Guest, ref.Ref)
	if err != nil {
		return err
	}
	xs, err := l.DomainSnapshotGetXMLDesc(s, uint32(libvirt.DomainSnapshotXMLSecure))
	if err != nil {
		return fmt.Errorf("read snapshot %s of %s: %w", ref.Ref, ref.Guest.Ref, err)
	}
	x, err := parseSnapshot(xs)
	if err != nil {
		return err
	}
	lab, ok := x.label()
	if !ok {
		return fmt.Errorf("snapshot %s of %s has no boxsnap label", ref.Ref, ref.Guest.Ref)
	}
	lab.KeptUntil = until
	def, err := relabel(xs, lab)
	if err != nil {
		return fmt.Errorf("label snapshot %s of %s: %w", ref.Ref, ref.Guest.Ref, err)
	}
	// Redefining the current snapshot without saying so would leave the
	// domain with none.
	flags := uint32(libvirt.DomainSnapshotCreateRedefine)
	if cur, err := l.DomainSnapshotIsCurrent(s, 0); err != nil {
		return fmt.Errorf("label snapshot %s of %s: %w", ref.Ref, ref.Guest.Ref, err)
	} else if cur == 1 {
		flags |= uint32(libvirt.DomainSnapshotCreateCurrent)
	}
	if _, err := l.DomainSnapshotCreateXML(d, def, flags); err != nil {
		if isNoSnapshot(err) || libvirt.IsNotFound(err) {
			return fmt.Errorf("snapshot %s of %s: %w", ref.Ref, ref.Guest.Ref, providers.ErrNotFound)
		}
		return fmt.Errorf("label snapshot %s of %s: %w", ref.Ref, ref.Guest.Ref, err)
	}
	return nil
}

// relabel answers the snapshot XML xs with its description replaced by
// the label lab, the rest as it was.
func relabel(xs string, lab snapLabel) (string, error) {
	def, err := snapshotDef(lab)
	if err != nil {
		return "", err
	}
	const open, shut = "<description>", "</description>"
	desc := def[strings.Index(def, open):]
	desc = desc[:strings.Index(desc, shut)+len(shut)]
	// The snapshot's own description comes before its domain's XML,
	// which may hold a description of its own.
	i := strings.Index(xs, open)
	if i < 0 {
		return "", errors.New("its XML has no description")
	}
	j := strings.Index(xs[i:], shut)
	if j < 0 {
		return "", errors.New("its XML's description is not closed")
	}
	return xs[:i] + desc + xs[i+j+len(shut):], nil
}

// setHeldKeptUntil rewrites the keep date on the held copy's record.
func (b heldCopies) setHeldKeptUntil(id string, until *time.Time) error {
	b.importMu.Lock()
	defer b.importMu.Unlock()
	m, err := b.readHeld(id)
	if err != nil {
		return err
	}
	m.Label.KeptUntil = until
	return b.writeHeld(id, m)
}

// setImportedKeptUntil rewrites the keep date on the imported snapshot's
// record; one no longer here wraps ErrNotFound.
func (b heldCopies) setImportedKeptUntil(id string, until *time.Time) error {
	b.importMu.Lock()
	defer b.importMu.Unlock()
	m, err := b.importedMeta(id)
	if err != nil {
		return err
	}
	m.KeptUntil = until
	if err := b.writeImported(m); err != nil {
		return fmt.Errorf("keep the imported snapshot %s: %w", id, err)
	}
	return nil
}
