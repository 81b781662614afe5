package take

import (
	"fmt"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// The words a person or an agent reads from the take, and from nowhere
// else: the kernel's words.go says the words the kernel and the other seams
// share. Each is one named function or constant, tested in words_test.go.

// refusal is a refusal in words of this file.
func refusal(code snapshots.Code, words string) *snapshots.Refusal {
	return &snapshots.Refusal{Code: code, Words: words}
}

// threadOf is the thread of an agent caller, nil for anyone else.
func threadOf(c snapshots.Caller) *string {
	if c.Kind == snapshots.CallerAgent {
		t := c.Thread
		return &t
	}
	return nil
}

// Why a take failed when its records went while it ran.
const (
	failTakeSnapshotGone = "its snapshot's record is gone"
	failTakeBoxGone      = "its box's record is gone"
)

// logTakenWords: snapshot-taken, "its name, ID, what it holds, how long".
func logTakenWords(name, id, holds string, took time.Duration) string {
	return fmt.Sprintf("%s, %s, in %s", snapshots.NamedID(name, id), holds, snapshots.DurationWords(took))
}

// logTakeFailedWords: snapshot-failed, "its name, the backend's words".
func logTakeFailedWords(name, why string) string { return fmt.Sprintf("‘%s’: %s", name, why) }

// logTakeIncompleteWords: snapshot-failed for a take that left part of
// itself.
func logTakeIncompleteWords(name, why string) string {
	return fmt.Sprintf("‘%s’ is incomplete: %s", name, why)
}

// failPartExistsWords: a take that left part of itself.
func failPartExistsWords(why string) string {
	return "part of the snapshot exists: " + why + ". Delete finishes the clean-up."
}

func releasedTakesNoneWords(box string) string {
	return fmt.Sprintf("%s is being released: it takes no snapshots.", box)
}

func diskOnlyWords(box string) string {
	return fmt.Sprintf("%s's snapshots hold the disk only: pass memory false.", box)
}

// perBoxLimitWords: a take past the per-box limit that the limit may not
// make room for, with what to delete.
func perBoxLimitWords(box string, count, perBox int, del string) string {
	return strings.TrimSpace(fmt.Sprintf("%s has %d of %d snapshots. %s", box, count, perBox, del))
}

// logUndoTakenWords: snapshot-taken for an undo, a release's final
// snapshot or a reset's undo (what: undoWordsOf).
func logUndoTakenWords(name, id, what, holds string) string {
	return fmt.Sprintf("%s, %s, %s", snapshots.NamedID(name, id), what, holds)
}
