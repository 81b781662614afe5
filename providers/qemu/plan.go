package qemu

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// Estimates a plan gives: a disk snapshot of a stopped guest, and a
// checkpoint's pause per GiB of the guest's memory (TCG and KVM alike: the
// save writes the memory out).
const (
	TakeDisk         = 2 * time.Second
	CheckpointPerGiB = 8 * time.Second
	RevertDisk       = 2 * time.Second
	// StopAbout is a restore's hard stop: libvirt's destroy of a running
	// guest took 1.5 to 1.8 s under TCG here.
	StopAbout       = 2 * time.Second
	BootAbout       = 30 * time.Second
	ForkAbout       = 5 * time.Second
	checkpointFloor = 2 * time.Second
	bytesPerGiB     = float64(1 << 30)
	// KeepPerGiB is a held copy's estimate per GiB of the box's disk: a
	// qemu-img convert of the snapshot out of the box's qcow2 wrote 139 MiB
	// in 0.27 s here (under load), so a disk written whole takes about 2 s
	// a GiB.
	KeepPerGiB = 2 * time.Second
	keepFloor  = 2 * time.Second
	// keepNoMemoryWhy is the plan's word on Keep for a snapshot with memory.
	keepNoMemoryWhy = "The held copy keeps the snapshot's disk, not its memory: a fork from it boots afresh."
)

// PlanSnapshots reads the domain (and the snapshot, if one is named) and
// says what a take, a restore, a keep and a fork would do now. Memory is
// offered where the guest runs: it has memory to give. A held copy's plan
// reads no domain: its box may be gone.
func (b *Backend) PlanSnapshots(ctx context.Context, g providers.Guest, snap *providers.SnapshotRef) (providers.SnapshotPlan, error) {
	if snap != nil && snap.Where == heldWhere {
		return b.planHeld(*snap)
	}
	l, d, err := b.domain(ctx, g)
	if err != nil {
		return providers.SnapshotPlan{}, err
	}
	x, err := b.readDomain(l, d)
	if err != nil {
		return providers.SnapshotPlan{}, err
	}
	on, err := runs(l, d)
	if err != nil {
		return providers.SnapshotPlan{}, err
	}
	size, err := b.size(l, d)
	if err != nil {
		return providers.SnapshotPlan{}, err
	}
	reset := 0
	if x.Metadata.Box != nil {
		reset = x.Metadata.Box.Reset
	}
	mem := size.MemoryBytes
	checkpoint := max(checkpointFloor, time.Duration(float64(CheckpointPerGiB)*float64(mem)/bytesPerGiB))
	st, err := b.room()
	if err != nil {
		return providers.SnapshotPlan{}, err
	}
	plan := providers.SnapshotPlan{Storage: st, Size: size}
	plan.Take = providers.TakePlan{OK: true, About: TakeDisk, ResetVersion: reset}
	if on {
		// A running guest's take is libvirt's checkpoint: it pauses the
		// guest while it saves the disk and the memory.
		plan.Take.About, plan.Take.PauseAbout = checkpoint, checkpoint
		plan.Take.MemoryAbout, plan.Take.MemoryBytes = checkpoint, &mem
	}
	if reset == 0 {
		plan.Take.ForkSafeWhy = "The guest's template carries no identity reset: a fork would keep its source's machine ID and host keys."
	}
	plan.Keep = keepPlan(size.DiskBytes, false)
	plan.Fork = providers.ForkPlan{OK: true, About: ForkAbout}
	// A restore's undo is a take of the guest once stopped (its capture
	// order): its disk alone, after the stop.
	undoAbout := TakeDisk
	if on {
		undoAbout += StopAbout
	}
	plan.Restore = providers.RestorePlan{Way: providers.WayNone, Undo: providers.UndoSnapshot, Order: diskOrder, RestartsProcesses: true, UndoAbout: undoAbout}
	if snap == nil {
		// With no snapshot named, the way a restore of the box goes.
		plan.Restore.Way = providers.WayRollback
		return plan, nil
	}
	if id, ok := importedID(snap.Ref); ok {
		return b.planImported(plan, id)
	}
	_, _, s, err := b.snapshot(ctx, g, snap.Ref)
	if errors.Is(err, providers.ErrNotFound) {
		plan.Restore.Why = "The snapshot is no longer in the guest's disk."
		plan.Fork = providers.ForkPlan{Why: plan.Restore.Why}
		return plan, nil
	}
	if err != nil {
		return providers.SnapshotPlan{}, err
	}
	sx, err := b.readSnapshot(l, s)
	if err != nil {
		return providers.SnapshotPlan{}, err
	}
	plan.Restore.Way = providers.WayRollback
	if sx.holds() == providers.HoldsDiskAndMemory {
		plan.Restore.Order, plan.Restore.RestartsProcesses = memoryOrder, false
		plan.Keep = keepPlan(size.DiskBytes, true)
	}
	if sx.Name == "" {
		return plan, fmt.Errorf("snapshot %s of %s has no name", snap.Ref, g.Ref)
	}
	return plan, nil
}

// planImported: an imported snapshot is a qcow2 of its own, outside the
// box's disk, so it forks into a new box and is never reverted in place.
func (b *Backend) planImported(plan providers.SnapshotPlan, id string) (providers.SnapshotPlan, error) {
	if _, err := b.importedMeta(id); errors.Is(err, providers.ErrNotFound) {
		plan.Restore.Why = "The imported snapshot is no longer in the QEMU backend's folder."
		plan.Fork = providers.ForkPlan{Why: plan.Restore.Why}
		return plan, nil
	} else if err != nil {
		return providers.SnapshotPlan{}, err
	}
	plan.Restore.Why = importedRestoreWhy
	return plan, nil
}

// planHeld is the plan for a held copy: it forks, and is never restored in
// place or kept again (it is the kept snapshot). Its box may be gone, so
// no domain is read.
func (b heldCopies) planHeld(snap providers.SnapshotRef) (providers.SnapshotPlan, error) {
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
