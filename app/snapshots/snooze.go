package snapshots

import (
	"encoding/json"
	"strings"

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

// TaskRecorder is the recorder of a step that may leave its provider task
// to the job's snooze: the snoozer, unless the run follows a task that
// failed, which the step asks again and waits for in place.
func (s *Kernel) TaskRecorder(op *Operation) providers.Recorder {
	if op.TaskEnded != nil && !op.TaskEnded.OK {
		return s.ops.Recorder(op)
	}
	return s.ops.Snoozer(op)
}
