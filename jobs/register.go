package jobs

import (
	"context"
	"log/slog"

	"github.com/riverqueue/river"

	"github.com/boxsnap/boxsnap/app/auth"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/hosts"
	"github.com/boxsnap/boxsnap/app/snapshots/sweeps"
)

// Deps are what the workers call.
type Deps struct {
	Auth *auth.Service
	Core *snapshots.Service
	// Sweeps are the periodic work the snapshot sweeps call; nil runs
	// none of them.
	Sweeps *sweeps.Sweeps
	Logger *slog.Logger
	// ManualHistory leaves the automatic check and thinning out of the
	// periodic jobs (their workers stay): tests whose boxes run call them
	// when they mean to, so no snapshot appears on its own mid-test.
	ManualHistory bool
	// Intervals are the periodic jobs' intervals; zero ones are the
	// defaults (periodic.go).
	Intervals Intervals
	// ContentSweep frees the local backend's content store's objects that
	// nothing names and repacks its packs mostly freed (contentstore.go);
	// nil with no content store.
	ContentSweep func(ctx context.Context) (int, error)
	// Hosts are the hosts boxsnap runs on: each live one's own work runs
	// on its queue (hostwork.go); nil runs none.
	Hosts *hosts.Hosts
}

// Register adds every worker to workers. This is the one place workers are
// registered.
func Register(workers *river.Workers, d Deps) error {
	if err := river.AddWorkerSafely(workers, newSweepWorker(d)); err != nil {
		return err
	}
	if d.Core != nil {
		if err := river.AddWorkerSafely(workers, &OperationWorker{engine: d.Core.Engine()}); err != nil {
			return err
		}
	}
	return nil
}

// Periodic lists every periodic job, from the one table in periodic.go.
func Periodic(d Deps) []*river.PeriodicJob {
	return periodicJobs(d)
}
