package jobs

import (
	"context"
	"time"

	"github.com/riverqueue/river"
)

// How often the snapshot sweeps run (DESIGN.md, "Periodic jobs"). None runs
// on start: a test's core, or a freshly started serve, sees its first sweep
// after one interval; the reconcile's LostAfter needs two listings 10
// minutes apart, so every 2 minutes gives a lost record within 12.
const (
	ReconcileInterval = 2 * time.Minute
	OutsideInterval   = time.Minute
	RoomInterval      = 5 * time.Minute
	ExpiryInterval    = 10 * time.Minute
	SweepHouseEvery   = time.Hour
)

// ReconcileArgs is the periodic reconcile of records with the backends'
// listings (section 1).
type ReconcileArgs struct{}

// Kind is the job's stable name.
func (ReconcileArgs) Kind() string { return "snapshots-reconcile" }

// InsertOpts keeps one queued at a time.
func (ReconcileArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueMaintenance, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// ReconcileWorker runs ReconcileArgs.
type ReconcileWorker struct {
	river.WorkerDefaults[ReconcileArgs]
	deps Deps
}

// Work reconciles, then resumes operations cut short.
func (w *ReconcileWorker) Work(ctx context.Context, _ *river.Job[ReconcileArgs]) error {
	rep, err := w.deps.Core.Reconcile(ctx)
	if err != nil {
		return err
	}
	if rep.Lost+rep.Found+rep.Kept+rep.Recorded+rep.Unavailable+rep.Back > 0 {
		w.deps.Logger.Info("reconcile", "lost", rep.Lost, "found", rep.Found, "kept", rep.Kept, "recorded", rep.Recorded,
			"unavailable", rep.Unavailable, "back", rep.Back, "unreachable", rep.Unreachable)
	}
	return nil
}

// OutsideArgs is the periodic outside-restore scan of the task lists
// (section 4).
type OutsideArgs struct{}

// Kind is the job's stable name.
func (OutsideArgs) Kind() string { return "snapshots-outside" }

// InsertOpts keeps one queued at a time.
func (OutsideArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueMaintenance, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// OutsideWorker runs OutsideArgs.
type OutsideWorker struct {
	river.WorkerDefaults[OutsideArgs]
	deps Deps
}

// Work scans the task lists.
func (w *OutsideWorker) Work(ctx context.Context, _ *river.Job[OutsideArgs]) error {
	_, err := w.deps.Core.ScanOutside(ctx)
	return err
}

// RoomArgs is the periodic room sweep (section 8).
type RoomArgs struct{}

// Kind is the job's stable name.
func (RoomArgs) Kind() string { return "snapshots-room" }

// InsertOpts keeps one queued at a time.
func (RoomArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueMaintenance, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// RoomWorker runs RoomArgs.
type RoomWorker struct {
	river.WorkerDefaults[RoomArgs]
	deps Deps
}

// Work runs the room sweep.
func (w *RoomWorker) Work(ctx context.Context, _ *river.Job[RoomArgs]) error {
	rep, err := w.deps.Core.RoomSweep(ctx)
	if len(rep.Deleted) > 0 {
		w.deps.Logger.Info("room sweep deleted snapshots", "count", len(rep.Deleted))
	}
	return err
}

// ExpiryArgs is the periodic expiry of keeps (section 1).
type ExpiryArgs struct{}

// Kind is the job's stable name.
func (ExpiryArgs) Kind() string { return "snapshots-expiry" }

// InsertOpts keeps one queued at a time.
func (ExpiryArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueMaintenance, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// ExpiryWorker runs ExpiryArgs.
type ExpiryWorker struct {
	river.WorkerDefaults[ExpiryArgs]
	deps Deps
}

// Work admits the expiries due.
func (w *ExpiryWorker) Work(ctx context.Context, _ *river.Job[ExpiryArgs]) error {
	_, err := w.deps.Core.ExpireKeeps(ctx)
	return err
}

// SnapshotHousekeepingArgs is the periodic housekeeping of records and the
// box log (section 1; section 4).
type SnapshotHousekeepingArgs struct{}

// Kind is the job's stable name.
func (SnapshotHousekeepingArgs) Kind() string { return "snapshots-housekeeping" }

// InsertOpts keeps one queued at a time.
func (SnapshotHousekeepingArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueMaintenance, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// SnapshotHousekeepingWorker runs SnapshotHousekeepingArgs.
type SnapshotHousekeepingWorker struct {
	river.WorkerDefaults[SnapshotHousekeepingArgs]
	deps Deps
}

// Work removes old failed and lost records and prunes the box log.
func (w *SnapshotHousekeepingWorker) Work(ctx context.Context, _ *river.Job[SnapshotHousekeepingArgs]) error {
	_, err := w.deps.Core.Housekeep(ctx)
	return err
}

// addSweepWorkers registers the sweeps' workers.
func addSweepWorkers(workers *river.Workers, d Deps) error {
	for _, add := range []func() error{
		func() error { return river.AddWorkerSafely(workers, &ReconcileWorker{deps: d}) },
		func() error { return river.AddWorkerSafely(workers, &OutsideWorker{deps: d}) },
		func() error { return river.AddWorkerSafely(workers, &RoomWorker{deps: d}) },
		func() error { return river.AddWorkerSafely(workers, &ExpiryWorker{deps: d}) },
		func() error { return river.AddWorkerSafely(workers, &SnapshotHousekeepingWorker{deps: d}) },
	} {
		if err := add(); err != nil {
			return err
		}
	}
	return nil
}

// sweepJobs are the sweeps' periodic jobs.
func sweepJobs() []*river.PeriodicJob {
	every := func(d time.Duration, id string, args river.JobArgs) *river.PeriodicJob {
		return river.NewPeriodicJob(river.PeriodicInterval(d),
			func() (river.JobArgs, *river.InsertOpts) { return args, nil },
			&river.PeriodicJobOpts{ID: id})
	}
	return []*river.PeriodicJob{
		every(ReconcileInterval, "snapshots-reconcile", ReconcileArgs{}),
		every(OutsideInterval, "snapshots-outside", OutsideArgs{}),
		every(RoomInterval, "snapshots-room", RoomArgs{}),
		every(ExpiryInterval, "snapshots-expiry", ExpiryArgs{}),
		every(SweepHouseEvery, "snapshots-housekeeping", SnapshotHousekeepingArgs{}),
	}
}
