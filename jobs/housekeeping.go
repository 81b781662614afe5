package jobs

import (
	"context"

	"github.com/riverqueue/river"
)

// HousekeepingArgs is the periodic housekeeping job: it removes expired
// sessions and set-up links.
type HousekeepingArgs struct{}

// Kind is the job's stable name.
func (HousekeepingArgs) Kind() string { return "housekeeping" }

// InsertOpts keeps one housekeeping job queued at a time.
func (HousekeepingArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueMaintenance, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// HousekeepingWorker runs HousekeepingArgs.
type HousekeepingWorker struct {
	river.WorkerDefaults[HousekeepingArgs]
	deps Deps
}

// Work removes what has expired.
func (w *HousekeepingWorker) Work(ctx context.Context, job *river.Job[HousekeepingArgs]) error {
	n, err := w.deps.Auth.DeleteExpired(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		w.deps.Logger.Info("housekeeping removed expired sessions and links", "count", n)
	}
	return nil
}
