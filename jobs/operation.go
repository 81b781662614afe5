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
