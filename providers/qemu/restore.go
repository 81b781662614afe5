package qemu

import (
	"context"
	"fmt"

	"github.com/digitalocean/go-libvirt"

	"github.com/boxsnap/boxsnap/providers"
)

// Capture orders. With memory: the undo (a checkpoint of the running guest,
// taken by the core), the core's access step (access.go), then the revert,
// which brings the guest back running from the snapshot's moment with
// today's access already on its access disk. A disk snapshot: the undo, a
// hard stop, the revert of the disk, the access, a start (the guest boots
// again), the size read back.
var (
	memoryOrder = []providers.RestoreStep{providers.StepUndo, providers.StepAccess, providers.StepRollback, providers.StepReadSize}
	diskOrder   = []providers.RestoreStep{providers.StepUndo, providers.StepStop, providers.StepRollback, providers.StepAccess, providers.StepStart, providers.StepReadSize}
)

// RestoreSnapshot runs one step of a restore in place, in the capture order
// the plan gives for the snapshot's kind.
func (b *Backend) RestoreSnapshot(ctx context.Context, g providers.Guest, ref providers.SnapshotRef, step providers.RestoreStep, rec providers.Recorder) (providers.RestoreProgress, error) {
	p := providers.RestoreProgress{Step: step}
	b.at("restore:" + string(step))
	switch step {
	case providers.StepStop:
		on, err := b.Runs(ctx, g)
		if err != nil {
			return p, err
		}
		if err := b.Stop(ctx, g); err != nil {
			return p, err
		}
		p.Done, p.Note, p.Ended = true, "stopped hard", on
	case providers.StepRollback:
		note, resumed, err := b.revert(ctx, g, ref)
		if err != nil {
			return p, err
		}
		p.Done, p.Note, p.Resumed = true, note, resumed
	case providers.StepStart:
		if err := b.Start(ctx, g); err != nil {
			return p, err
		}
		p.Done, p.Note = true, "started"
	case providers.StepReadSize:
		l, d, err := b.domain(ctx, g)
		if err != nil {
			return p, err
		}
		if p.Size, err = b.size(l, d); err != nil {
			return p, err
		}
		p.Done = true
	case providers.StepUndo:
		return p, fmt.Errorf("the undo is the core's own take: %w", providers.ErrUnsupported)
	default:
		return p, fmt.Errorf("restore step %q: %w", step, providers.ErrUnsupported)
	}
	return p, nil
}

// revert reverts the guest to the snapshot: with its memory, running, its
// processes with it (resumed); a disk snapshot leaves the guest stopped, its
// disk as the snapshot holds it (a checkpoint taken without memory asked is
// reverted paused and stopped, so only its disk comes back).
func (b *Backend) revert(ctx context.Context, g providers.Guest, ref providers.SnapshotRef) (note string, resumed bool, err error) {
	if _, ok := importedID(ref.Ref); ok {
		return "", false, &providers.RefusedError{Why: importedRestoreWhy}
	}
	l, d, s, err := b.snapshot(ctx, g, ref.Ref)
	if err != nil {
		return "", false, err
	}
	x, err := b.readSnapshot(l, s)
	if err != nil {
		return "", false, err
	}
	if x.holds() == providers.HoldsDiskAndMemory {
		if err := l.DomainRevertToSnapshot(s, uint32(libvirt.DomainSnapshotRevertRunning)); err != nil {
			return "", false, fmt.Errorf("revert %s to %s: %w", g.Ref, ref.Ref, err)
		}
		return "restored with its memory: the guest runs on from " + ref.Ref + ", its processes with it", true, nil
	}
	if x.withMemory() {
		if err := l.DomainRevertToSnapshot(s, uint32(libvirt.DomainSnapshotRevertPaused)); err != nil {
			return "", false, fmt.Errorf("revert %s to %s: %w", g.Ref, ref.Ref, err)
		}
		if err := l.DomainDestroy(d); err != nil {
			return "", false, fmt.Errorf("stop %s after its revert: %w", g.Ref, err)
		}
	} else if err := l.DomainRevertToSnapshot(s, 0); err != nil {
		return "", false, fmt.Errorf("revert %s to %s: %w", g.Ref, ref.Ref, err)
	}
	return "restored the disk of " + ref.Ref + ": the guest's processes start again", false, nil
}

// importedRestoreWhy says why an imported snapshot is not restored in place.
const importedRestoreWhy = "An imported QEMU snapshot is a disk of its own, outside this box's disk: fork it into a new box instead of restoring it here."
