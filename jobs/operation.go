package jobs

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// OperationWorker runs one snapshot operation: it calls the core, which runs
// the operation from the step it reached.
type OperationWorker struct {
	river.WorkerDefaults[snapshots.OperationArgs]
	core *snapshots.Service
}

// Timeout is long: a Proxmox held copy can take many minutes, and the core
// bounds each backend call itself.
func (w *OperationWorker) Timeout(*river.Job[snapshots.OperationArgs]) time.Duration {
	return 6 * time.Hour
}

// Work runs the operation.
func (w *OperationWorker) Work(ctx context.Context, job *river.Job[snapshots.OperationArgs]) error {
	return w.core.RunOperation(ctx, job.Args.Op)
}

// RecoverArgs is the periodic job that resumes operations whose worker died
// while other workers live (serve and work also recover at start).
type RecoverArgs struct{}

// Kind is the job's stable name.
func (RecoverArgs) Kind() string { return "recover" }

// InsertOpts keeps one queued at a time.
func (RecoverArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueMaintenance, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// RecoverWorker runs RecoverArgs.
type RecoverWorker struct {
	river.WorkerDefaults[RecoverArgs]
	core *snapshots.Service
}

// Work resumes what no live worker runs.
func (w *RecoverWorker) Work(ctx context.Context, _ *river.Job[RecoverArgs]) error {
	_, err := w.core.Recover(ctx)
	return err
}
