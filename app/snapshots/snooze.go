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
func stepTaskDone(op *Operation) bool {
	if op.TaskEnded == nil || !op.TaskEnded.OK {
		return false
	}
	var ref providers.TaskRef
	if err := json.Unmarshal(op.Task, &ref); err != nil {
		return false
	}
	return !ref.Prior
}

// taskFailedWords are the words of a step that failed after the task it
// snoozed on failed too: the step's own, and the first task's where they say
// something more.
func taskFailedWords(op *Operation, words string) string {
	if op.TaskEnded == nil || op.TaskEnded.OK || op.TaskEnded.ExitStatus == "" || strings.Contains(words, op.TaskEnded.ExitStatus) {
		return words
	}
	return words + " (the task before said: " + op.TaskEnded.ExitStatus + ")"
}

// loggedBefore reports whether op already wrote an event of kind in its
// box's log, for a run resumed after a snooze or a restart.
func loggedBefore(ctx context.Context, st *store.Store, op *Operation, box, kind string) (bool, error) {
	logged, err := st.SnoozeOpLogged(ctx, st.Pool, db.SnoozeOpLoggedParams{BoxID: box, OperationID: op.ID, Kind: kind})
	if err != nil {
		return false, fmt.Errorf("read the box log of %s: %w", op.ID, err)
	}
	return logged, nil
}

// providerStep reports whether a restore step is the backend's own
// (RestoreSnapshot's: stop, rollback, start, read the size), which a task
// ended OK has done; the undo and the swap's steps find what they did.
func providerStep(step providers.RestoreStep) bool {
	switch step {
	case providers.StepUndo, providers.StepAccess, providers.StepAdopt, providers.StepEarlier:
		return false
	}
	return true
}
