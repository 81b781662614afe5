package qemu

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/digitalocean/go-libvirt"

	"github.com/boxsnap/boxsnap/providers"
)

// Capture orders, Proxmox's for QEMU: a hard stop first, then the undo (the
// core's take of the stopped guest, its disk alone), so nothing the guest
// wrote before the restore is in neither the undo nor the restored box; a
// restore ends the processes running now, whichever the snapshot. With
// memory, then the core's access step (access.go) and the revert, which
// brings the guest back running from the snapshot's moment, its processes
// with it, with today's access already on its access disk. A disk
// snapshot: then the revert of the disk, the access, a start (the guest
// boots again), the size read back. The undo holds no memory, so undoing
// a restore is a disk restore: the guest boots again from the disk it had
// when it stopped.
var (
	memoryOrder = []providers.RestoreStep{providers.StepStop, providers.StepUndo, providers.StepAccess, providers.StepRollback, providers.StepReadSize}
	diskOrder   = []providers.RestoreStep{providers.StepStop, providers.StepUndo, providers.StepRollback, providers.StepAccess, providers.StepStart, providers.StepReadSize}
)

// RestoreSnapshot runs one step of a restore in place, in the capture order
// the plan gives for the snapshot's kind. Each step finds the domain once
// and makes only the libvirt calls it needs (a stop is one destroy, a start
// one create, each reading the guest's state only when libvirt refuses
// it); a debug line says how long each call took.
func (b *Backend) RestoreSnapshot(ctx context.Context, g providers.Guest, ref providers.SnapshotRef, step providers.RestoreStep, rec providers.Recorder) (providers.RestoreProgress, error) {
	p := providers.RestoreProgress{Step: step}
	b.at("restore:" + string(step))
	switch step {
	case providers.StepUndo:
		return p, fmt.Errorf("the undo is the core's own take: %w", providers.ErrUnsupported)
	case providers.StepStop, providers.StepRollback, providers.StepStart, providers.StepReadSize:
	default:
		return p, fmt.Errorf("restore step %q: %w", step, providers.ErrUnsupported)
	}
	calls := newCallTimes()
	defer calls.log(ctx, b.log, "a restore step's calls", slog.String("guest", g.Ref), slog.String("step", string(step)))
	if _, ok := importedID(ref.Ref); ok && step == providers.StepRollback {
		return p, &providers.RefusedError{Why: importedRestoreWhy}
	}
	l, d, err := b.domain(ctx, g)
	calls.mark("lookup")
	if err != nil {
		return p, err
	}
	switch step {
	case providers.StepStop:
		ended, err := stop(l, d)
		calls.mark("destroy")
		if err != nil {
			return p, err
		}
		p.Done, p.Note, p.Ended = true, "stopped hard", ended
	case providers.StepRollback:
		note, resumed, err := b.revert(l, d, g, ref, calls)
		if err != nil {
			return p, err
		}
		p.Done, p.Note, p.Resumed = true, note, resumed
	case providers.StepStart:
		err := start(l, d)
		calls.mark("create")
		if err != nil {
			return p, err
		}
		p.Done, p.Note = true, "started"
	case providers.StepReadSize:
		x, err := b.readDomain(l, d)
		calls.mark("domain-xml")
		if err != nil {
			return p, err
		}
		p.Size = sizeOf(l, d, x)
		calls.mark("disk-header")
		p.Done = true
	}
	return p, nil
}

// revert reverts the guest to the snapshot: with its memory, running, its
// processes with it (resumed); a disk snapshot leaves the guest stopped, its
// disk as the snapshot holds it (a checkpoint taken without memory asked is
// reverted paused and stopped, so only its disk comes back). Its snapshot's
// XML is read to know which.
func (b *Backend) revert(l *libvirt.Libvirt, d libvirt.Domain, g providers.Guest, ref providers.SnapshotRef, calls *callTimes) (note string, resumed bool, err error) {
	s, err := l.DomainSnapshotLookupByName(d, ref.Ref, 0)
	calls.mark("snapshot-lookup")
	if isNoSnapshot(err) {
		return "", false, fmt.Errorf("snapshot %s of %s: %w", ref.Ref, g.Ref, providers.ErrNotFound)
	}
	if err != nil {
		return "", false, fmt.Errorf("look up snapshot %s of %s: %w", ref.Ref, g.Ref, err)
	}
	x, err := b.readSnapshot(l, s)
	calls.mark("snapshot-xml")
	if err != nil {
		return "", false, err
	}
	// The scan for reverts made outside boxsnap knows this one is boxsnap's
	// (outside.go).
	if err := b.beforeOwn(l, d, ref.Ref); err != nil {
		b.log.Warn("this revert may be logged as made outside boxsnap", "guest", g.Ref, "err", err)
	}
	defer func() {
		if err == nil {
			if merr := b.markAfterOwn(l, d); merr != nil {
				b.log.Warn("a later revert made outside boxsnap may go unseen", "guest", g.Ref, "err", merr)
			}
			calls.mark("mark")
		}
	}()
	if x.holds() == providers.HoldsDiskAndMemory {
		err := l.DomainRevertToSnapshot(s, uint32(libvirt.DomainSnapshotRevertRunning))
		calls.mark("revert")
		if err != nil {
			return "", false, fmt.Errorf("revert %s to %s: %w", g.Ref, ref.Ref, err)
		}
		return "restored with its memory: the guest runs on from " + ref.Ref + ", its processes with it", true, nil
	}
	if x.withMemory() {
		err := l.DomainRevertToSnapshot(s, uint32(libvirt.DomainSnapshotRevertPaused))
		calls.mark("revert")
		if err != nil {
			return "", false, fmt.Errorf("revert %s to %s: %w", g.Ref, ref.Ref, err)
		}
		err = l.DomainDestroy(d)
		calls.mark("destroy")
		if err != nil {
			return "", false, fmt.Errorf("stop %s after its revert: %w", g.Ref, err)
		}
	} else {
		err := l.DomainRevertToSnapshot(s, 0)
		calls.mark("revert")
		if err != nil {
			return "", false, fmt.Errorf("revert %s to %s: %w", g.Ref, ref.Ref, err)
		}
	}
	return "restored the disk of " + ref.Ref + ": the guest's processes start again", false, nil
}

// importedRestoreWhy says why an imported snapshot is not restored in place.
const importedRestoreWhy = "An imported QEMU snapshot is a disk of its own, outside this box's disk: fork it into a new box instead of restoring it here."
