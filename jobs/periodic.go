package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/boxsnap/boxsnap/app/snapshots/hosts"
	"github.com/boxsnap/boxsnap/app/snapshots/sweeps"
)

// How often the periodic jobs run.
const (
	// RecoverInterval: a worker that dies while others live has its
	// operations resumed within this long (every process also resumes at
	// start).
	RecoverInterval = 30 * time.Second
	// ReconcileInterval: the reconcile's LostAfter needs two listings 10
	// minutes apart, so every 2 minutes gives a lost record within 12.
	ReconcileInterval = 2 * time.Minute
	OutsideInterval   = time.Minute
	RoomInterval      = 5 * time.Minute
	ExpiryInterval    = 10 * time.Minute
	// TrashInterval: a box leaves the trash within this long of its window's
	// end.
	TrashInterval = 5 * time.Minute
	// HousekeepingInterval is for sessions, set-up links, old records and
	// the box log.
	HousekeepingInterval = time.Hour
	// AutomaticInterval is how often the automatic check looks (a third of
	// the shortest backend cadence; each box is due at its own); ThinInterval is thinning's, often enough that its
	// one-a-minute tier holds.
	AutomaticInterval = sweeps.CheckInterval
	ThinInterval      = time.Minute
)

// Intervals are how often each periodic job runs; a zero field is its
// default above. The fields are app/config's Intervals', so serve and work
// hand the settings over as they are (BOXSNAP_*_INTERVAL); tests shorten
// them.
type Intervals struct {
	Recover, Reconcile, Outside, Room, Expiry, Trash, Housekeeping, Automatic, Thinning, Hosts, ContentSweep time.Duration
}

// orDefaults fills each zero interval with its default.
func (i Intervals) orDefaults() Intervals {
	or := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	or(&i.Recover, RecoverInterval)
	or(&i.Reconcile, ReconcileInterval)
	or(&i.Outside, OutsideInterval)
	or(&i.Room, RoomInterval)
	or(&i.Expiry, ExpiryInterval)
	or(&i.Trash, TrashInterval)
	or(&i.Housekeeping, HousekeepingInterval)
	or(&i.Automatic, AutomaticInterval)
	or(&i.Thinning, ThinInterval)
	or(&i.Hosts, hosts.BackfillEvery)
	or(&i.ContentSweep, ContentSweepInterval)
	return i
}

// sweep is one periodic job: its name (the job's args and its periodic ID),
// how often it runs, whether it runs at start, and what it does.
type sweep struct {
	name    string
	every   time.Duration
	onStart bool
	// history marks automatic history's sweeps, which Deps.ManualHistory
	// leaves to the caller.
	history bool
	// onHost marks a run on one host's queue, which another sweep queues
	// (hostwork.go): it is no periodic job of its own.
	onHost bool
	// fan marks a sweep each host runs for the boxes it owns: its
	// periodic run, wherever it runs, also queues a run on every other
	// live host's queue (hostwork.go).
	fan bool
	// fanTo, when set, is the sweep its periodic run queues on every other
	// live host's queue instead of itself (as fan does).
	fanTo string
	run   func(ctx context.Context, d Deps) error
}

// sweepTable is the one table of periodic jobs. The snapshot sweeps do not run
// at start (serve reconciles once at start itself), so a freshly started
// process sees its first sweep after one interval.
func sweepTable(d Deps) []sweep {
	every := d.Intervals.orDefaults()
	out := []sweep{{name: "sessions", every: every.Housekeeping, onStart: true, run: func(ctx context.Context, d Deps) error {
		n, err := d.Auth.DeleteExpired(ctx)
		if n > 0 {
			d.Logger.Info("housekeeping removed expired sessions and links", "count", n)
		}
		return err
	}}}
	out = append(out, contentSweeps(d)...)
	out = append(out, hostSweeps(d, every.Hosts)...)
	if d.Core == nil {
		return out
	}
	out = append(out, sweep{name: "recover", every: every.Recover, onStart: true, run: func(ctx context.Context, d Deps) error {
		_, err := d.Core.Recover(ctx)
		return err
	}})
	if d.Sweeps == nil {
		return out
	}
	return append(out,
		// The reconcile lists every backend this process reaches; a
		// one-host backend (QEMU, a local Docker engine) only its own host
		// lists, so each other live host reconciles its own on its queue.
		sweep{name: "reconcile", every: every.Reconcile, fanTo: reconcileHere, run: func(ctx context.Context, d Deps) error {
			return logReconcile(d, "reconcile")(d.Sweeps.Reconcile(ctx))
		}},
		sweep{name: reconcileHere, onHost: true, run: func(ctx context.Context, d Deps) error {
			return logReconcile(d, reconcileHere)(d.Sweeps.ReconcileHere(ctx))
		}},
		// Likewise the outside-restore scan: a one-host backend's list
		// (QEMU's libvirtd) only its own host reads.
		sweep{name: "outside-restores", every: every.Outside, fanTo: outsideHere, run: func(ctx context.Context, d Deps) error {
			_, err := d.Sweeps.ScanOutside(ctx)
			return err
		}},
		sweep{name: outsideHere, onHost: true, run: func(ctx context.Context, d Deps) error {
			_, err := d.Sweeps.ScanOutsideHere(ctx)
			return err
		}},
		// Likewise the room sweep: a one-host backend's storage is on its
		// host's disk, so each other live host sweeps its own.
		sweep{name: "room", every: every.Room, fanTo: roomHere, run: func(ctx context.Context, d Deps) error {
			return logRoom(d, "room sweep")(d.Sweeps.RoomSweep(ctx))
		}},
		sweep{name: roomHere, onHost: true, run: func(ctx context.Context, d Deps) error {
			return logRoom(d, roomHere)(d.Sweeps.RoomSweepHere(ctx))
		}},
		sweep{name: "expiry", every: every.Expiry, run: func(ctx context.Context, d Deps) error {
			_, err := d.Sweeps.ExpireKeeps(ctx)
			return err
		}},
		sweep{name: "automatic", every: every.Automatic, history: true, fan: true, run: func(ctx context.Context, d Deps) error {
			rep, err := d.Sweeps.CheckAutomatic(ctx)
			if len(rep.Taken) > 0 || rep.Walked > 0 {
				d.Logger.Info("automatic check", "checked", rep.Checked, "taken", len(rep.Taken), "walked", rep.Walked)
			}
			return err
		}},
		sweep{name: "thinning", every: every.Thinning, history: true, run: func(ctx context.Context, d Deps) error {
			rep, err := d.Sweeps.ThinHistory(ctx)
			if rep.Snapshots > 0 {
				d.Logger.Info("thinning", "boxes", rep.Boxes, "operations", rep.Operations, "snapshots", rep.Snapshots)
			}
			return err
		}},
		sweep{name: "trash", every: every.Trash, run: func(ctx context.Context, d Deps) error {
			ops, err := d.Sweeps.EmptyDueTrash(ctx)
			if len(ops) > 0 {
				d.Logger.Info("the trash sweep released boxes whose time in the trash ended", "count", len(ops))
			}
			return err
		}},
		sweep{name: "housekeeping", every: every.Housekeeping, run: func(ctx context.Context, d Deps) error {
			_, err := d.Sweeps.Housekeep(ctx)
			return err
		}},
	)
}

// reconcileHere names a host's reconcile of its one-host backends.
const reconcileHere = "reconcile-here"

// outsideHere names a host's outside-restore scan of its one-host backends.
const outsideHere = "outside-here"

// roomHere names a host's room sweep of its one-host backends' storage.
const roomHere = "room-here"

// logRoom logs what a room sweep (name) deleted, and answers its error.
func logRoom(d Deps, name string) func(sweeps.RoomReport, error) error {
	return func(rep sweeps.RoomReport, err error) error {
		if len(rep.Deleted) > 0 {
			d.Logger.Info(name+" deleted snapshots", "count", len(rep.Deleted))
		}
		return err
	}
}

// logReconcile logs what a reconcile (name) changed, and answers its error.
func logReconcile(d Deps, name string) func(sweeps.ReconcileReport, error) error {
	return func(rep sweeps.ReconcileReport, err error) error {
		if rep.Lost+rep.Found+rep.Kept+rep.Recorded+rep.Unavailable+rep.Back > 0 {
			d.Logger.Info(name, "lost", rep.Lost, "found", rep.Found, "kept", rep.Kept, "recorded", rep.Recorded,
				"unavailable", rep.Unavailable, "back", rep.Back, "unreachable", rep.Unreachable)
		}
		return err
	}
}

// SweepArgs is one periodic job's run; Name says which.
type SweepArgs struct {
	Name string `json:"name" river:"unique"`
	// Host is the host whose queue runs it, for a host's own work.
	Host string `json:"host,omitempty" river:"unique"`
}

// Kind is the job's stable name.
func (SweepArgs) Kind() string { return "sweep" }

// InsertOpts keeps one run of each sweep queued or running at a time, on
// the maintenance queue, so a slow sweep never delays a box's operation.
// Unique only in the states of a run to come or under way: River's default
// states include completed (kept 24 h by its cleaner), cancelled and
// discarded, and with them each sweep ran once and its later inserts were
// skipped as duplicates of the finished run. River requires available,
// pending, running and scheduled; retryable is a run to come. A run a
// killed worker left running is made available again by any live worker
// within the recover interval (operations.Presence, Engine.FreeDeadJobs),
// and failing that by River's rescuer (rescueStuckJobsAfter).
func (SweepArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueMaintenance, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: SweepUniqueStates}}
}

// SweepUniqueStates are the states in which a sweep's run keeps another
// from being queued.
var SweepUniqueStates = []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
	rivertype.JobStateRetryable, rivertype.JobStateScheduled,
}

// SweepWorker runs a sweep by its name.
type SweepWorker struct {
	river.WorkerDefaults[SweepArgs]
	deps   Deps
	byName map[string]sweep
}

func newSweepWorker(d Deps) *SweepWorker {
	w := &SweepWorker{deps: d, byName: map[string]sweep{}}
	for _, s := range sweepTable(d) {
		w.byName[s.name] = s
	}
	return w
}

// Work runs the sweep.
func (w *SweepWorker) Work(ctx context.Context, job *river.Job[SweepArgs]) error {
	s, ok := w.byName[job.Args.Name]
	if !ok {
		return river.JobCancel(fmt.Errorf("no sweep named %q", job.Args.Name))
	}
	if (s.fan || s.fanTo != "") && job.Args.Host == "" {
		name := s.name
		if s.fanTo != "" {
			name = s.fanTo
		}
		if err := fanOutSweep(ctx, w.deps, name); err != nil {
			w.deps.Logger.Warn("queue a sweep on the other hosts", "sweep", s.name, "err", err)
		}
	}
	return s.run(ctx, w.deps)
}

func periodicJobs(d Deps) []*river.PeriodicJob {
	var out []*river.PeriodicJob
	for _, s := range sweepTable(d) {
		if (s.history && d.ManualHistory) || s.onHost {
			continue
		}
		args := SweepArgs{Name: s.name}
		out = append(out, river.NewPeriodicJob(river.PeriodicInterval(s.every),
			func() (river.JobArgs, *river.InsertOpts) { return args, nil },
			&river.PeriodicJobOpts{ID: s.name, RunOnStart: s.onStart}))
	}
	return out
}
