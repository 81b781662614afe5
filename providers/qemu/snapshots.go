package qemu

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/digitalocean/go-libvirt"

	"github.com/boxsnap/boxsnap/providers"
)

// storageInternal names where the snapshots live: inside the box's qcow2.
const storageInternal = "qcow2-internal"

// Snapshotting says what the backend offers for a Linux virtual machine:
// disk snapshots, and disk and memory of a running guest, which libvirt
// pauses while it saves them; a kept snapshot outlives its box's release
// as a held copy of its disk (heldcopy.go).
func (b *Backend) Snapshotting(kind string) *providers.Snapshotting {
	if kind != KindLinux {
		return nil
	}
	return &providers.Snapshotting{Scope: providers.ScopeBox,
		Holds:        []providers.Holds{providers.HoldsDisk, providers.HoldsDiskAndMemory},
		WhileRunning: providers.WhileRunningPauses, Restore: providers.RestoreInPlace, Fork: providers.ForkCopy,
		KeepsPastRelease: providers.KeepsHeldCopy, Lives: providers.LivesHost}
}

// Snapshot takes a qcow2 internal snapshot through libvirt, named by the
// snapshot's ID with its label in its description: of a stopped guest its
// disk; of a running one libvirt's checkpoint, disk and memory, the guest
// paused while it saves them. Asked again for a snapshot it holds, it
// answers that one.
func (b *Backend) Snapshot(ctx context.Context, g providers.Guest, take providers.SnapshotTake, rec providers.Recorder) (providers.SnapshotTaken, error) {
	l, d, err := b.domain(ctx, g)
	if err != nil {
		return providers.SnapshotTaken{}, err
	}
	if s, err := l.DomainSnapshotLookupByName(d, take.Label.Snapshot, 0); err == nil {
		return b.taken(l, s)
	} else if !isNoSnapshot(err) {
		return providers.SnapshotTaken{}, fmt.Errorf("look up snapshot %s of %s: %w", take.Label.Snapshot, g.Ref, err)
	}
	meta, err := readMeta(l, d)
	if err != nil {
		return providers.SnapshotTaken{}, err
	}
	on, err := runs(l, d)
	if err != nil {
		return providers.SnapshotTaken{}, err
	}
	if take.Memory && !on {
		return providers.SnapshotTaken{}, &providers.RefusedError{Why: "A stopped guest has no memory to snapshot: take its disk, or start it first."}
	}
	lab := snapLabel{Label: take.Label, Memory: take.Memory}
	if meta != nil {
		lab.ResetVersion = meta.Reset
	}
	def, err := snapshotDef(lab)
	if err != nil {
		return providers.SnapshotTaken{}, err
	}
	if err := b.beforeOwn(l, d, ""); err != nil {
		b.log.WarnContext(ctx, "a revert made outside boxsnap before this take may go unseen", "guest", g.Ref, "err", err)
	}
	b.at("take:prepared")
	start := time.Now()
	s, err := l.DomainSnapshotCreateXML(d, def, 0)
	if err != nil {
		return providers.SnapshotTaken{}, fmt.Errorf("snapshot %s of %s: %w", take.Label.Snapshot, g.Ref, err)
	}
	b.at("take:taken")
	if err := b.markAfterOwn(l, d); err != nil {
		b.log.WarnContext(ctx, "a revert to this snapshot made outside boxsnap may go unseen", "guest", g.Ref, "snapshot", take.Label.Snapshot, "err", err)
	}
	t, err := b.taken(l, s)
	if err != nil {
		return t, err
	}
	t.CapturedAt = start
	if on {
		t.Paused = time.Since(start)
	}
	b.log.InfoContext(ctx, "snapshot taken", "guest", g.Ref, "snapshot", take.Label.Snapshot, "holds", t.Holds, "took", time.Since(start))
	return t, nil
}

// taken answers a snapshot as a take does, from its XML.
func (b *Backend) taken(l *libvirt.Libvirt, s libvirt.DomainSnapshot) (providers.SnapshotTaken, error) {
	x, err := b.readSnapshot(l, s)
	if err != nil {
		return providers.SnapshotTaken{}, err
	}
	lab, _ := x.label()
	return providers.SnapshotTaken{Ref: x.Name, Storage: storageInternal, CapturedAt: x.takenAt(), Holds: x.holds(),
		ResetVersion: lab.ResetVersion, Parent: x.Parent.Name}, nil
}

func (b *Backend) readSnapshot(l *libvirt.Libvirt, s libvirt.DomainSnapshot) (snapshotXML, error) {
	xs, err := l.DomainSnapshotGetXMLDesc(s, 0)
	if err != nil {
		return snapshotXML{}, fmt.Errorf("read snapshot %s: %w", s.Name, err)
	}
	return parseSnapshot(xs)
}

// snapshot finds a snapshot of the guest; a missing one (or a missing
// guest) wraps ErrNotFound.
func (b *Backend) snapshot(ctx context.Context, g providers.Guest, ref string) (*libvirt.Libvirt, libvirt.Domain, libvirt.DomainSnapshot, error) {
	l, d, err := b.domain(ctx, g)
	if err != nil {
		return l, d, libvirt.DomainSnapshot{}, err
	}
	s, err := l.DomainSnapshotLookupByName(d, ref, 0)
	if isNoSnapshot(err) {
		return l, d, s, fmt.Errorf("snapshot %s of %s: %w", ref, g.Ref, providers.ErrNotFound)
	}
	if err != nil {
		return l, d, s, fmt.Errorf("look up snapshot %s of %s: %w", ref, g.Ref, err)
	}
	return l, d, s, nil
}

// DeleteSnapshot deletes the qcow2 internal snapshot, the imported
// snapshot's qcow2, or the held copy; one already gone, or whose guest is
// gone, is deleted. Deleting an internal snapshot removes what a held
// copy of it cut short left.
func (b *Backend) DeleteSnapshot(ctx context.Context, ref providers.SnapshotRef, rec providers.Recorder) error {
	if ref.Where == heldWhere {
		return b.removeHeld(ref.ID)
	}
	if id, ok := importedID(ref.Ref); ok {
		return b.removeImported(id)
	}
	if err := b.dropHalfHeld(ref.ID); err != nil {
		return err
	}
	l, _, s, err := b.snapshot(ctx, ref.Guest, ref.Ref)
	if errors.Is(err, providers.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	b.at("delete:prepared")
	if err := l.DomainSnapshotDelete(s, 0); err != nil && !isNoSnapshot(err) {
		return fmt.Errorf("delete snapshot %s of %s: %w", ref.Ref, ref.Guest.Ref, err)
	}
	if err := b.forget(ref.Guest.Ref, ref.Ref); err != nil {
		b.log.WarnContext(ctx, "this delete may be logged as made outside boxsnap", "guest", ref.Guest.Ref, "snapshot", ref.Ref, "err", err)
	}
	return nil
}

// HeldSnapshots lists every labelled snapshot of this install's domains,
// every imported snapshot and every held copy.
func (b *Backend) HeldSnapshots(ctx context.Context) ([]providers.HeldSnapshot, error) {
	l, err := b.conn(ctx)
	if err != nil {
		return nil, err
	}
	out, err := b.heldImported()
	if err != nil {
		return nil, err
	}
	copies, err := b.listHeld()
	if err != nil {
		return nil, err
	}
	out = append(out, copies...)
	doms, _, err := l.ConnectListAllDomains(1, 0)
	if err != nil {
		return nil, fmt.Errorf("list domains: %v: %w", err, providers.ErrUnreachable)
	}
	for _, d := range doms {
		x, err := b.readDomain(l, d)
		if libvirt.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if x.Metadata.Box == nil || x.Metadata.Box.Install != b.cfg.Install {
			continue
		}
		snaps, _, err := l.DomainListAllSnapshots(d, 1, 0)
		if libvirt.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list snapshots of %s: %w", d.Name, err)
		}
		g := b.guest(d.Name)
		for _, s := range snaps {
			sx, err := b.readSnapshot(l, s)
			if isNoSnapshot(err) || libvirt.IsNotFound(err) {
				// Deleted, or its domain released, since the listing.
				continue
			}
			if err != nil {
				return nil, err
			}
			lab, ok := sx.label()
			if !ok {
				continue
			}
			out = append(out, providers.HeldSnapshot{
				Ref:   providers.SnapshotRef{ID: lab.Snapshot, Ref: sx.Name, Guest: g, Storage: storageInternal, Where: "current"},
				Label: lab.Label, Storage: storageInternal, TakenAt: sx.takenAt(), Holds: sx.holds(), Parent: sx.Parent.Name,
			})
		}
	}
	return out, nil
}

// ChangeCadence: libvirt cannot say whether a disk changed without reading
// it, so each check of a running box takes one.
func (b *Backend) ChangeCadence() providers.Cadence {
	return providers.Cadence{Every: time.Minute,
		Why: "libvirt cannot tell whether a guest's disk changed without reading it, so each check of a running box takes one"}
}

// Changes reads whether the domain exists and runs, and answers
// ChangedUnknown: libvirt has no cheap question for "did the disk change".
func (b *Backend) Changes(ctx context.Context, g providers.Guest) (providers.ChangeCheck, error) {
	l, d, err := b.domain(ctx, g)
	if errors.Is(err, providers.ErrNotFound) {
		return providers.ChangeCheck{}, nil
	}
	if err != nil {
		return providers.ChangeCheck{}, err
	}
	on, err := runs(l, d)
	if err != nil {
		return providers.ChangeCheck{}, err
	}
	return providers.ChangeCheck{Exists: true, Running: on, Changed: providers.ChangedUnknown,
		Why: "libvirt cannot tell without reading the guest's disk"}, nil
}

// heldImported lists the imported snapshots as held, each labelled with
// the box it was imported into and its keep date.
func (b *archives) heldImported() ([]providers.HeldSnapshot, error) {
	list, err := b.importedSnapshots()
	if err != nil {
		return nil, err
	}
	var out []providers.HeldSnapshot
	for _, m := range list {
		ref := b.importedRef(m.Group, m.ID)
		out = append(out, providers.HeldSnapshot{Ref: ref, Storage: storageImported, TakenAt: m.TakenAt, Holds: providers.HoldsDisk, Parent: m.Parent,
			Label: providers.Label{Install: b.cfg.Install, Box: m.Group, Snapshot: m.ID, ResetVersion: m.Reset, KeptUntil: m.KeptUntil}})
	}
	return out, nil
}
