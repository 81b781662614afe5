package restore

import (
	"context"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// resetParams are fixed at admission, so a resumed reset does the same.
type resetParams struct {
	KeepLogins bool     `json:"keepLogins"`
	Logins     []string `json:"logins,omitempty"`
	Template   string   `json:"template,omitempty"`
	Source     string   `json:"source"`
	Command    string   `json:"command,omitempty"`
	WasRunning bool     `json:"wasRunning"`
}

// ResetResult is what a finished reset answers.
type ResetResult struct {
	Template string `json:"template,omitempty"`
	Undo     string `json:"undo"`
	UndoName string `json:"undoName"`
	// Kept are the login files carried over, Skipped those left out, each
	// with why.
	Kept     []string `json:"kept,omitempty"`
	Skipped  []string `json:"skipped,omitempty"`
	Started  bool     `json:"started"`
	Replaced []string `json:"replacedUndos,omitempty"`
	// UndoneItself is set on a reset that failed and put the box back to
	// its undo.
	UndoneItself bool `json:"undoneItself,omitempty"`
}

// RestoreDry is what a dry run of a restore answers: what the restore would
// change and the plan's words. A dry run changes nothing: no operation, no
// job, no undo, no pin.
type RestoreDry struct {
	Box      *snapshots.Box
	Snapshot *snapshots.Snapshot
	// Changes is what differs between the snapshot and the box now (first
	// page), nil where the backend cannot tell.
	Changes *snapshots.Comparison
	// Undo is set when the restore would take an undo, and
	// UndoOnceStopped when it would take it once the box is stopped
	// rather than first (UndoOnceStopped).
	Undo, UndoOnceStopped bool
	// RestartsProcesses says every process in the box ends.
	RestartsProcesses bool
}

// RestorePreviewer says what a restore to a snapshot would change (the
// Contents seam's RestorePreview): a dry run's Changes.
type RestorePreviewer interface {
	RestorePreview(ctx context.Context, c snapshots.Caller, id string) (*snapshots.Comparison, error)
}
