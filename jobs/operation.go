package jobs

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/boxsnap/boxsnap/app/operations"
)

// OperationWorker runs one operation's job: the engine runs the operation
// from the step it reached, by its kind's registered runner, or snoozes
// the job while its provider task runs.
type OperationWorker struct {
	river.WorkerDefaults[operations.Args]
	engine *operations.Engine
}

// Timeout is long: a held copy waited for in place can take many minutes,
// and the core bounds each backend call itself.
func (w *OperationWorker) Timeout(*river.Job[operations.Args]) time.Duration {
	return 6 * time.Hour
}

// Work runs the operation.
func (w *OperationWorker) Work(ctx context.Context, job *river.Job[operations.Args]) error {
	return w.engine.Work(ctx, job.Args)
}
