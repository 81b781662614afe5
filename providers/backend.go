package providers

import (
	"context"
	"time"
)

// Backend is what a snapshot backend offers the core: what it can do per
// kind, with no call to a host (Snapshotting), what it would do for one box
// and one snapshot, read live and changing nothing (PlanSnapshots), and the
// operations themselves, each only where the plan says it can.
//
// Every method that reaches a host takes a context first; a backend that cannot
// reach its host returns an error wrapping ErrUnreachable, which marks nothing
// (a failed listing never makes a snapshot lost).
type Backend interface {
	// ID is the backend's ID in settings, such as "local" or "pve-lab".
	ID() string

	// Snapshotting says what the backend offers for a kind of box, with no I/O.
	// It returns nil where the kind takes no snapshots.
	Snapshotting(kind string) *Snapshotting

	// PlanSnapshots reads the guest and its storage and says what a take, a
	// restore to snap, a keep and a fork would do now. With snap nil (no
	// target yet) the restore says the way the box's restores go, never
	// WayNone for a backend that restores.
	PlanSnapshots(ctx context.Context, guest Guest, snap *SnapshotRef) (SnapshotPlan, error)

	// Snapshot takes one snapshot of the guest, labelled as take.Label says.
	// It returns only once the backend confirms the snapshot complete, since
	// a take is ready only then; a snapshot of which part exists returns an
	// error wrapping ErrIncomplete.
	Snapshot(ctx context.Context, guest Guest, take SnapshotTake, rec Recorder) (SnapshotTaken, error)

	// RestoreSnapshot runs one step of a restore; the core records each step
	// before it asks for it, and asks for them in the order the plan's
	// Restore.Order gives. The undo (StepUndo) is the core's own Snapshot
	// call, never passed here.
	RestoreSnapshot(ctx context.Context, guest Guest, ref SnapshotRef, step RestoreStep, rec Recorder) (RestoreProgress, error)

	// ForkSnapshot makes a new guest for box from the snapshot, cleaned of
	// its source's identity before its first start. The core starts it.
	ForkSnapshot(ctx context.Context, ref SnapshotRef, box BoxIdentity, rec Recorder) (Guest, error)

	// DeleteSnapshot deletes one snapshot, finishing the backend's own clean-up
	// of an incomplete one. Deleting a snapshot that is already gone succeeds.
	DeleteSnapshot(ctx context.Context, ref SnapshotRef, rec Recorder) error

	// HeldSnapshots lists every snapshot, earlier guest and held copy of this
	// install that the backend holds, from their labels, for the reconcile.
	HeldSnapshots(ctx context.Context) ([]HeldSnapshot, error)

	// ProviderTask reads a backend task by its reference after a restart.
	ProviderTask(ctx context.Context, task TaskRef) (TaskOutcome, error)

	// Changes says, as cheaply as the backend can, whether the guest runs
	// and whether its disk changed since its last snapshot (ChangedUnknown
	// where the backend cannot tell without taking one). The core asks it
	// at the backend's ChangeCadence for automatic snapshots. It takes
	// nothing and changes nothing the box can see.
	Changes(ctx context.Context, guest Guest) (ChangeCheck, error)

	// ChangeCadence is how often Changes is asked of a running box by
	// default, with no I/O.
	ChangeCadence() Cadence
}

// Boxes is the part of a backend that makes, starts, stops and releases boxes.
// Every backend in boxsnap implements it; it is apart from Backend because the
// snapshot operations never need it.
type Boxes interface {
	// Acquire makes a box's guest (a folder, a clone of a template, or an
	// existing guest adopted by its reference) and returns it.
	Acquire(ctx context.Context, spec BoxSpec) (Guest, error)
	// Release deletes the guest. Snapshots the core still holds records for are
	// deleted by the core first; kept ones stay, as Snapshotting's
	// KeepsPastRelease says.
	Release(ctx context.Context, guest Guest) error
	// Start and Stop control the guest; Stop is a hard stop.
	Start(ctx context.Context, guest Guest) error
	Stop(ctx context.Context, guest Guest) error
	// Status reads whether the guest exists and runs, and its size.
	Status(ctx context.Context, guest Guest) (GuestStatus, error)
}

// RunsReader is implemented by backends that can say whether a guest runs
// more cheaply than Status, which also reads its size: a restore asks it
// just before its stop, so that a restore that fails after the stop starts
// again only a box that was running.
type RunsReader interface {
	Runs(ctx context.Context, guest Guest) (bool, error)
}

// HeldCopier is implemented by backends whose Keep past a release, or whose
// undo on some storage, is a held copy.
type HeldCopier interface {
	HoldCopy(ctx context.Context, source SnapshotRef, label Label, step HeldCopyStep, rec Recorder) (HeldCopyProgress, error)
	// AdoptCopy makes a new guest for box from a held copy. step is
	// HeldCopyClone, or HeldCopyCloned once the core saw the adoption's own
	// clone task end OK (it snoozed on it), when the guest that clone made
	// is gone on with rather than made again.
	AdoptCopy(ctx context.Context, copy SnapshotRef, box BoxIdentity, identity GuestIdentity, step HeldCopyStep, rec Recorder) (Guest, error)
}

// TaskLister is implemented by backends that keep a task list a restore made
// outside boxsnap shows up in.
type TaskLister interface {
	// RecentTasks lists the tasks on every host of the backend that started at
	// or after since, newest first.
	RecentTasks(ctx context.Context, since time.Time) ([]Task, error)
}

// Screener is implemented by backends that can capture a box's screen for a
// snapshot's picture. It returns an encoded image (PNG or JPEG).
type Screener interface {
	Screen(ctx context.Context, guest Guest) ([]byte, error)
}

// Recorder is how a backend tells the core what it must record before the
// backend waits: a provider task's reference (a Proxmox UPID), so that after a
// restart the core can ask ProviderTask where it got to. A nil Recorder is
// allowed and records nothing.
type Recorder interface {
	TaskStarted(ctx context.Context, task TaskRef) error
}

// RecordTask calls rec.TaskStarted when rec is not nil.
func RecordTask(ctx context.Context, rec Recorder, task TaskRef) error {
	if rec == nil {
		return nil
	}
	return rec.TaskStarted(ctx, task)
}
