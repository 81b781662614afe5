package jobs

import (
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/boxsnap/boxsnap/app/auth"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// Deps are what the workers call.
type Deps struct {
	Auth   *auth.Service
	Core   *snapshots.Service
	Logger *slog.Logger
}

// How often the periodic jobs run.
const (
	HousekeepingInterval = time.Hour
	// RecoverInterval: a worker that dies while others live has its
	// operations resumed within this long.
	RecoverInterval = 30 * time.Second
)

// Register adds every worker to workers. This is the one place workers are
// registered.
func Register(workers *river.Workers, d Deps) error {
	if err := river.AddWorkerSafely(workers, &HousekeepingWorker{deps: d}); err != nil {
		return err
	}
	if d.Core != nil {
		if err := river.AddWorkerSafely(workers, &OperationWorker{core: d.Core}); err != nil {
			return err
		}
		if err := river.AddWorkerSafely(workers, &RecoverWorker{core: d.Core}); err != nil {
			return err
		}
		if err := addSweepWorkers(workers, d); err != nil {
			return err
		}
	}
	return nil
}

// Periodic lists every periodic job. This is the one place they are
// registered.
func Periodic(d Deps) []*river.PeriodicJob {
	jobs := []*river.PeriodicJob{
		river.NewPeriodicJob(river.PeriodicInterval(HousekeepingInterval),
			func() (river.JobArgs, *river.InsertOpts) { return HousekeepingArgs{}, nil },
			&river.PeriodicJobOpts{ID: "housekeeping", RunOnStart: true}),
	}
	if d.Core != nil {
		jobs = append(jobs, river.NewPeriodicJob(river.PeriodicInterval(RecoverInterval),
			func() (river.JobArgs, *river.InsertOpts) { return RecoverArgs{}, nil },
			&river.PeriodicJobOpts{ID: "recover", RunOnStart: true}))
		jobs = append(jobs, sweepJobs()...)
	}
	return jobs
}
