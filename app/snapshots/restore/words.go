package restore

import (
	"fmt"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// refusal is a refusal of code in words written here.
func refusal(code snapshots.Code, words string) *snapshots.Refusal {
	return &snapshots.Refusal{Code: code, Words: words}
}

// ResetDoneWords says what a finished reset did: the one home of these
// words for the API, the CLI and the pages.
func ResetDoneWords(box string, res ResetResult) string {
	w := "Reset " + box + " to a fresh box"
	if res.Template != "" {
		w += " from " + res.Template
	}
	w += "."
	if len(res.Kept) > 0 {
		w += " Kept its logins: " + strings.Join(res.Kept, ", ") + "."
	}
	if len(res.Skipped) > 0 {
		w += " Skipped " + strings.Join(res.Skipped, "; ") + "."
	}
	if res.UndoName != "" {
		w += fmt.Sprintf(" Undo restores ‘%s’.", res.UndoName)
	}
	return w
}

// resetWords says what a reset did, for the box log.
func resetWords(res ResetResult) string {
	w := "reset to a fresh box"
	if res.Template != "" {
		w += " from " + res.Template
	}
	if len(res.Kept) > 0 {
		w += "; kept " + strings.Join(res.Kept, ", ")
	}
	if len(res.Skipped) > 0 {
		w += "; skipped " + strings.Join(res.Skipped, "; ")
	}
	if res.UndoName != "" {
		w += fmt.Sprintf("; Undo restores ‘%s’", res.UndoName)
	}
	return w
}

// DryRunWords says what a restore would do, for a dry run's answer.
func DryRunWords(d *RestoreDry) string {
	w := fmt.Sprintf("A restore of %s to ‘%s’ would", d.Box.Name, d.Snapshot.Name)
	if d.Undo {
		w += " first take an undo, then"
	}
	w += " put back everything on its disk as it was then"
	if d.RestartsProcesses {
		w += "; every process in it ends"
	}
	w += "."
	if d.Changes != nil {
		w += " " + d.Changes.Words + "."
	}
	return w + " Nothing changed: this was a dry run."
}
