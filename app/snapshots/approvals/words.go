package approvals

import (
	"fmt"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// The words a person or an agent reads from requests for the person's word,
// and from nowhere else: the kernel's words.go says the words the kernel and
// the other seams share. Each is one named function or constant, tested in
// words_test.go.

// refusal is a refusal in words of this file.
func refusal(code snapshots.Code, words string) *snapshots.Refusal {
	return &snapshots.Refusal{Code: code, Words: words}
}

// HeldWords say why a held thread's tool waits: its box is being restored.
func HeldWords(box string) string {
	return fmt.Sprintf("%s is being restored, or waits for the person's word to be: this thread's turns are held until it is ready again. Try again then.", box)
}

// logRequestedWords: restore-requested, an agent's request waiting for the
// person's word.
func logRequestedWords(name, request string) string {
	return fmt.Sprintf("to ‘%s’ (request %s); it waits for the person's word", name, request)
}

// logDeclinedWords: restore-declined.
func logDeclinedWords(request, name string) string {
	return fmt.Sprintf("request %s to ‘%s’: nothing was restored", request, name)
}

// approvalPlanWords is the plan a request shows: what goes, and the undo.
func approvalPlanWords(a *Approval, sn *snapshots.Snapshot) []string {
	w := []string{fmt.Sprintf("Restore %s to ‘%s’: everything on its disk since then goes.", a.BoxName, sn.Name)}
	if len(a.Goes) > 0 {
		w = append(w, "Also goes: "+strings.Join(a.Goes, " "))
	}
	w = append(w, fmt.Sprintf("An undo of %s is taken first; it cannot be left out.", a.BoxName))
	return w
}

// onlyPersonAnswersWords: an agent never answers a request, its own or
// another's.
const onlyPersonAnswersWords = "Only the person answers a request."

func noRequestWords(id string) string { return fmt.Sprintf("No request %s.", id) }

// The person's answer, refused where it cannot be given.

// planChangedWords: the plan the person approved is not the plan now, so
// nothing happens on their yes.
func planChangedWords(now string) string {
	return fmt.Sprintf("The plan changed since the request, so nothing was restored. Now: %s Approve again to restore with this plan.", now)
}

func requestExpiredWords(id, at string) string {
	return fmt.Sprintf("Request %s expired at %s: nothing was restored.", id, at)
}

func requestWasWords(id, state string) string {
	return fmt.Sprintf("Request %s was %s already.", id, state)
}

func requestAnsweredWords(id string) string {
	return fmt.Sprintf("Request %s was answered already.", id)
}

// Requests to the person, as the asking agent reads them: who asked whom,
// and what happened, in the past tense once it has ("You asked the person
// to restore dev-desk to ‘before the upgrade’. End your turn now: nothing
// you do on dev-desk after this survives the restore.").

func askedWords(box, name, request string, execution bool) string {
	w := fmt.Sprintf("You asked the person to restore %s to ‘%s’ (request %s).", box, name, request)
	if execution {
		return w + fmt.Sprintf(" End your turn now: nothing you do on %s after this survives the restore.", box)
	}
	return w + " It waits for their word."
}

func requestExpiredUnansweredWords(request, at string) string {
	return fmt.Sprintf("Your request %s expired at %s with no answer: nothing was restored.", request, at)
}

const requestSnapshotGoneWords = "Its snapshot is gone: nothing was restored."

func planChangedTooOftenWords(request string, times int) string {
	return fmt.Sprintf("The plan of request %s changed %d times: nothing was restored. Ask again.", request, times)
}

func requestCouldNotRunWords(request, why string) string {
	return fmt.Sprintf("Request %s could not run: %s", request, why)
}

func approvedWords(request, at, box, name, op string) string {
	return fmt.Sprintf("The person approved your request %s at %s, and the restore of %s to ‘%s’ started then, with an undo (operation %s).", request, at, box, name, op)
}

func approvedRestoredWords(request, at, box, name, ended, op string) string {
	return fmt.Sprintf("The person approved your request %s at %s; %s was restored to ‘%s’ at %s, with an undo (operation %s).", request, at, box, name, ended, op)
}

func approvedFailedWords(request, at, box, name, why, op string) string {
	return fmt.Sprintf("The person approved your request %s at %s; the restore of %s to ‘%s’ failed (operation %s): %s", request, at, box, name, op, why)
}

func approvedUnknownWords(request, at, box, name, why, op string) string {
	return fmt.Sprintf("The person approved your request %s at %s; how the restore of %s to ‘%s’ ended is not known (operation %s): %s", request, at, box, name, op, why)
}

func declinedWords(request, box, name string) string {
	return fmt.Sprintf("The person declined your request %s to restore %s to ‘%s’: nothing was restored.", request, box, name)
}

// NeedsInput is a poll's state of a request waiting for the person's word.
const NeedsInput = "needs input"

// NeedsInputWords is a poll's answer while a restore's request waits for
// the person's word.
func NeedsInputWords(a *Approval) string {
	return fmt.Sprintf("Request %s needs input: it waits for the person's word on restoring %s to ‘%s’. Ask box_operation again with it: once they approve, it answers the restore's operation.", a.ID, a.BoxName, a.SnapshotName)
}
