package jobs

import (
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/boxsnap/boxsnap/app/auth"
)

// Deps are what the workers call.
type Deps struct {
	Auth   *auth.Service
	Logger *slog.Logger
}

// HousekeepingInterval is how often housekeeping runs.
const HousekeepingInterval = time.Hour

// Register adds every worker to workers. This is the one place workers are
// registered.
func Register(workers *river.Workers, d Deps) error {
	if err := river.AddWorkerSafely(workers, &HousekeepingWorker{deps: d}); err != nil {
		return err
	}
	return nil
}

// Periodic lists every periodic job. This is the one place they are
// registered.
func Periodic(d Deps) []*river.PeriodicJob {
	return []*river.PeriodicJob{
		river.NewPeriodicJob(river.PeriodicInterval(HousekeepingInterval),
			func() (river.JobArgs, *river.InsertOpts) { return HousekeepingArgs{}, nil },
			&river.PeriodicJobOpts{ID: "housekeeping", RunOnStart: true}),
	}
}
