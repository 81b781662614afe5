package snapshots

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// stepTaskDone reports whether this run follows the recorded step's own
// provider task, which the provider says ended OK: the step is done, and the
// run goes on from the next one. A task the step only waited for before
// starting its own (providers.TaskRef.Prior) says nothing of the step.
func StepTaskDone(op *Operation) bool {
	if op.TaskEnded == nil || !op.TaskEnded.OK {
		return false
	}
	var ref providers.TaskRef
	if err := json.Unmarshal(op.Task, &ref); err != nil {
		return false
	}
	return !ref.Prior
}

// TaskFailedWords are the words of a step that failed after the task it
// snoozed on failed too: the step's own, and the first task's where they say
// something more.
func TaskFailedWords(op *Operation, words string) string {
	if op.TaskEnded == nil || op.TaskEnded.OK || op.TaskEnded.ExitStatus == "" || strings.Contains(words, op.TaskEnded.ExitStatus) {
		return words
	}
	return words + " (the task before said: " + op.TaskEnded.ExitStatus + ")"
}

// taskFailedError is err with TaskFailedWords' addition, for words that
// format an error.
func TaskFailedError(op *Operation, err error) error {
	if TaskFailedWords(op, err.Error()) != err.Error() {
		return fmt.Errorf("%w (the task before said: %s)", err, op.TaskEnded.ExitStatus)
	}
	return err
}

// LoggedBefore reports whether op already wrote an event of kind in its
// box's log, for a run resumed after a snooze or a restart.
func LoggedBefore(ctx context.Context, st *store.Store, op *Operation, box, kind string) (bool, error) {
	logged, err := st.SnoozeOpLogged(ctx, st.Pool, db.SnoozeOpLoggedParams{BoxID: box, OperationID: op.ID, Kind: kind})
	if err != nil {
		return false, fmt.Errorf("read the box log of %s: %w", op.ID, err)
	}
	return logged, nil
}

// ProviderStep reports whether a restore step is the backend's own
// (RestoreSnapshot's: stop, rollback, start, read the size), which a task
// ended OK has done; the undo and the swap's steps find what they did.
func ProviderStep(step providers.RestoreStep) bool {
	switch step {
	case providers.StepUndo, providers.StepAccess, providers.StepAdopt, providers.StepEarlier:
		return false
	}
	return true
}

// stopGuest stops g within a step of op that runs again as it resumes: the
// stop's task is left to the job's snooze where the backend can leave it
// (providers.TaskStopper), answering operations.ErrTaskPending; called
// again, a guest already stopped is left as it is.
func (s *Kernel) StopGuest(ctx context.Context, op *Operation, be Backend, g providers.Guest) error {
	if ts, ok := be.Boxes.(providers.TaskStopper); ok {
		return ts.StopRecorded(ctx, g, s.TaskRecorder(op))
	}
	return be.Boxes.Stop(ctx, g)
}

// startGuest starts g within a step of op that runs again as it resumes,
// as stopGuest stops it (providers.TaskStarter).
func (s *Kernel) StartGuest(ctx context.Context, op *Operation, be Backend, g providers.Guest) error {
	if ts, ok := be.Boxes.(providers.TaskStarter); ok {
		return ts.StartRecorded(ctx, g, s.TaskRecorder(op))
	}
	return be.Boxes.Start(ctx, g)
}

// TaskRecorder is the recorder of a step that may leave its provider task
// to the job's snooze: the snoozer, unless the run follows a task that
// failed, which the step asks again and waits for in place.
func (s *Kernel) TaskRecorder(op *Operation) providers.Recorder {
	if op.TaskEnded != nil && !op.TaskEnded.OK {
		return s.ops.Recorder(op)
	}
	return s.ops.Snoozer(op)
}
