package keep

import (
	"fmt"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// The words the keeps alone say: a keep's date and its refusals, the box
// log's kept and deleted events, and what a delete or a keep observed.

// logDeletedWords: snapshot-deleted, "its name, what it freed, why".
func logDeletedWords(name, id string, freed *int64, why string) string {
	if freed != nil {
		return fmt.Sprintf("%s, freed %s, %s", snapshots.NamedID(name, id), snapshots.GB(*freed), why)
	}
	return fmt.Sprintf("%s, %s", snapshots.NamedID(name, id), why)
}

// logEarlierGuestDeletedWords: snapshot-deleted for an earlier guest,
// "the last on an earlier guest".
func logEarlierGuestDeletedWords(box, guest string) string {
	return fmt.Sprintf("%s's earlier guest %s, with no snapshot left on it", box, guest)
}

// logKeptWords: snapshot-kept, "until when".
func logKeptWords(name string, until time.Time) string {
	return fmt.Sprintf("‘%s’ until %s", name, until.Format("2 Jan 2006"))
}

// What boxsnap observed of a snapshot after its operation failed.
const observedAlreadyGone = "it was already gone"

// failLabelRefusedWords: a keep whose label the backend refused.
func failLabelRefusedWords(backend string, err error) string {
	return fmt.Sprintf("%s refused the label, so nothing is kept: %v", backend, err)
}

// deletePartWayWords: a delete the backend stopped part way (the
// snapshot's record, incomplete).
func deletePartWayWords(err error) string { return fmt.Sprintf("the delete stopped part way: %v", err) }

// keptUndoCountsWords: a kept undo is an ordinary kept snapshot, so it
// counts in the per-box limit, as an undo otherwise does not.
func keptUndoCountsWords(box string, count, perBox int, del string) string {
	return strings.TrimSpace(fmt.Sprintf("A kept undo counts in the %d: %s has %d of %d already. %s", perBox, box, count, perBox, del))
}

const keepFromTodayWords = "A keep date must be today or later."

func keepAtMostWords(days int) string {
	return fmt.Sprintf("A snapshot is kept at most %d days from today.", days)
}

// refusal is the kernel's refusal of code in words, as the pages, the API
// and the CLI show it.
func refusal(code snapshots.Code, words string) *snapshots.Refusal {
	return &snapshots.Refusal{Code: code, Words: words}
}

// The words of saving and unsaving a snapshot and of Delete history.

// logSavedWords: snapshot-saved and snapshot-unsaved.
func logSavedWords(name, id string) string { return snapshots.NamedID(name, id) }

// onlyPersonDeletesHistoryWords refuses an agent Delete history.
const onlyPersonDeletesHistoryWords = "Only the person deletes a box's history."

// savingPassesWords: saving an automatic snapshot counts it in the limit.
func savingPassesWords(box string, count, perBox int, name, del string) string {
	return strings.TrimSpace(fmt.Sprintf("%s has %d of %d snapshots: saving ‘%s’ would pass it. %s", box, count, perBox, name, del))
}

// undoNeverAutomaticWords refuses Unsave of an undo.
func undoNeverAutomaticWords(name string) string {
	return fmt.Sprintf("‘%s’ is an undo: it is never automatic.", name)
}

// namedAlreadyWords refuses a name another snapshot of box holds.
func namedAlreadyWords(box, name string) string {
	return fmt.Sprintf("%s has a snapshot named ‘%s’ already.", box, name)
}

// DeleteHistoryWords is the refusal when the typed name is not the box's.
func DeleteHistoryWords(box string) string {
	return fmt.Sprintf("Type the box's name, %s, to delete its automatic history.", box)
}
