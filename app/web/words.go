package web

import (
	"fmt"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/boxview"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
)

// The words only app/web's handlers say: the flash after a start, a
// trashed box page's notice, the Settings line of the automatic history,
// the note under a snapshot's files, and /healthz's answer. Words the core or another surface
// says too live in app/snapshots' words.go.

// OwnSizeNoteWords says, where a snapshot's files are listed, which size
// is which: each file's there, and the snapshot's own on its row, what it
// added to the store (and what deleting it frees).
func OwnSizeNoteWords(name string, own int64) string {
	return fmt.Sprintf("Sizes here are each file's. ‘%s’ itself takes %s: what it added to the store, where a file it shares with another snapshot is kept once. Deleting it frees that.", name, snapshots.GB(own))
}

// StartingWords says that a box was started.
func StartingWords(box string) string { return fmt.Sprintf("Started %s.", box) }

// InTrashUntilWords is a trashed box page's notice: when it goes.
func InTrashUntilWords(until string) string {
	return fmt.Sprintf("Released: it goes %s with its snapshots that nobody kept. Restore it to use it again, with its history.", until)
}

// AutomaticNowWords is Settings' line under a backend's automatic history:
// what it does for that backend's boxes now, as the check last saw them.
func AutomaticNowWords(n boxview.AutomaticNow, everySeconds int) string {
	if n.Running+n.Stopped+n.Off+n.Unchecked == 0 {
		return "No boxes here yet."
	}
	var parts []string
	if n.Running > 0 {
		parts = append(parts, fmt.Sprintf("%s, checked every %s", snapshots.Plural(n.Running, "box runs", "boxes run"), pagemodel.EveryWords(everySeconds)))
	}
	if n.Stopped > 0 {
		if n.Stopped == 1 {
			parts = append(parts, "1 box is stopped, so none are taken until it runs")
		} else {
			parts = append(parts, fmt.Sprintf("%d boxes are stopped, so none are taken until they run", n.Stopped))
		}
	}
	if n.Unchecked > 0 {
		parts = append(parts, fmt.Sprintf("%s not asked yet", snapshots.Plural(n.Unchecked, "box", "boxes")))
	}
	if n.Off > 0 {
		parts = append(parts, fmt.Sprintf("%s them off", snapshots.Plural(n.Off, "box has", "boxes have")))
	}
	return "Now, as last checked: " + strings.Join(parts, "; ") + "."
}

// ReleasingWords says that a release began (the release dialog, emptying
// the trash).
func ReleasingWords(box string) string {
	return "Releasing " + box + ": its snapshots that nobody kept go with it."
}

// DatabaseDownWords is /healthz's answer when the database does not answer,
// with why (the server's or the system's words, never its address).
func DatabaseDownWords(why string) string { return "database does not answer: " + why }

// noAnswerWithinWords says the ping had no answer in time.
func noAnswerWithinWords(d time.Duration) string { return "no answer within " + d.String() }

// itsConnectionFailedWords says the ping failed for another reason.
const itsConnectionFailedWords = "its connection failed"
