package snapshots

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// RestoreRequest asks to restore a box to one of its snapshots.
type RestoreRequest struct {
	Box      string
	Snapshot string
	// Replace must be true for an agent: a restore replaces everything on the
	// box since the snapshot.
	Replace bool
	// NoUndo restores without an undo: the person's choice alone, never on a
	// box threads run on.
	NoUndo bool
	// Force is the person's "Restore anyway": it goes on past what the guard
	// names.
	Force     bool
	RequestID string
	// DryRun checks everything the restore would check and admits nothing:
	// the restore's dry run sets it; the pages, the API and the CLI never
	// do.
	DryRun bool
	// Consent is the person's yes to an agent's request, set by the
	// approvals seam alone when the person approves: the restore then runs
	// as the agent's, past what the person saw.
	Consent *Consent
	// Along, when set, runs in the transaction that admits the restore,
	// before the admission: a move makes the box's new host its owner
	// there, so the owner changes if and only if the restore that carries
	// the box over is admitted, whatever kills the process in between.
	Along func(ctx context.Context, tx pgx.Tx) error
}

// Consent is the yes an approved restore carries on its operation: who
// answered (boxsnap knows, so it names them), when, the request, the plan
// it was bound to and what it said goes.
type Consent struct {
	By      string    `json:"by"`
	At      time.Time `json:"at"`
	Request string    `json:"request"`
	Plan    string    `json:"plan"`
	Goes    []string  `json:"goes,omitempty"`
}

// OpReset is a reset's operation.
const OpReset = "reset"

// The reset's steps and box log events.
const (
	StepStop   = "stop"
	StepReset  = "reset"
	StepLogins = "logins"
	StepStart  = "start"
	EvReset    = "reset"
	// EvResetUndone is a reset that undid itself.
	EvResetUndone = "reset-undone"
	// EvResetFailed is a reset that stopped and was not undone: it had no
	// undo, or its undo could not be restored.
	EvResetFailed = "reset-failed"
)

// checkLoginPath refuses, in words, a login path that is not inside a home
// folder.
func checkLoginPath(p string) error {
	t := strings.TrimSpace(p)
	if t == "" || strings.HasPrefix(t, "/") || path.Clean(t) != t || t == "." || strings.HasPrefix(t, "..") || strings.Contains(t, "/../") {
		return fmt.Errorf("%q: a login to keep is a file inside a home folder, with no .. and no leading /.", p)
	}
	return CheckLine("A login to keep", t)
}

// EvSetStraight is the box log's event for a box set straight after a
// restore, boxsnap's own or one made outside it.
const EvSetStraight = "set-straight"
