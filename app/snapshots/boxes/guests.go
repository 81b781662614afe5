package boxes

import (
	"context"
	"fmt"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// stopGuest stops g within a step of op that runs again as it resumes: the
// stop's task is left to the job's snooze where the backend can leave it
// (providers.TaskStopper), answering operations.ErrTaskPending; called
// again, a guest already stopped is left as it is.
func (s *Boxes) stopGuest(ctx context.Context, op *snapshots.Operation, be snapshots.Backend, g providers.Guest) error {
	if ts, ok := be.Boxes.(providers.TaskStopper); ok {
		return ts.StopRecorded(ctx, g, s.k.TaskRecorder(op))
	}
	return be.Boxes.Stop(ctx, g)
}

// startGuest starts g within a step of op that runs again as it resumes,
// as stopGuest stops it (providers.TaskStarter).
func (s *Boxes) startGuest(ctx context.Context, op *snapshots.Operation, be snapshots.Backend, g providers.Guest) error {
	if ts, ok := be.Boxes.(providers.TaskStarter); ok {
		return ts.StartRecorded(ctx, g, s.k.TaskRecorder(op))
	}
	return be.Boxes.Start(ctx, g)
}

// taskFailedError is err with snapshots.TaskFailedWords' addition, for
// words that format an error.
func taskFailedError(op *snapshots.Operation, err error) error {
	if snapshots.TaskFailedWords(op, err.Error()) != err.Error() {
		return fmt.Errorf("%w (the task before said: %s)", err, op.TaskEnded.ExitStatus)
	}
	return err
}
