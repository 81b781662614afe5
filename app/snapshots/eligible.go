package snapshots

import (
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// Change is what eligible is asked about.
type Change string

// The changes eligible decides.
const (
	ChangeDelete      Change = "delete"       // the person's or an agent's delete
	ChangeExpire      Change = "expire"       // a keep's end
	ChangeEvictLimit  Change = "evict-limit"  // the per-box limit
	ChangeEvictRoom   Change = "evict-room"   // the room sweep
	ChangeReplaceUndo Change = "replace-undo" // a new undo replaces an old one
	ChangeKeep        Change = "keep"
	ChangeUnkeep      Change = "unkeep"
	ChangeRename      Change = "rename"
	ChangeNote        Change = "note"
	ChangeRestore     Change = "restore" // as a restore's target
	ChangeFork        Change = "fork"    // as a fork's source
	ChangeThin        Change = "thin"    // thinning the automatic history
)

// automatic reports whether a change deletes without anyone asking.
func (c Change) automatic() bool {
	return c == ChangeExpire || c == ChangeEvictLimit || c == ChangeEvictRoom || c == ChangeReplaceUndo || c == ChangeThin
}

// Pin is an operation that uses a snapshot.
type Pin struct {
	Operation string
	Kind      string
	At        time.Time
	Box       string
}

// Eligible is the one eligibility check, made at the moment of each change on
// every path: whether snapshot s may undergo change now, given the operations
// that pin it (other than the one asking, which the caller leaves out). It is
// called at the moment of the change, by every path: rows, menus, dialogs,
// bulk actions, the CLI, the tools, the sweeps and the limit.
func Eligible(s *Snapshot, change Change, pins []Pin, now time.Time, tz *time.Location) error {
	if len(pins) > 0 {
		p := pins[0]
		return refusal(CodeBusy, inUseWords(s.Name, pinWords(p, tz)))
	}
	if change.automatic() {
		if change == ChangeThin {
			// Thinning takes automatic snapshots only: a saved one (the
			// person's, an agent's, or one Save made ordinary) is never thinned.
			if !s.Automatic {
				return refusal(CodeProtected, savedNotThinnedWords(s.Name))
			}
			if s.IsUndo() {
				return refusal(CodeProtected, undoNotThinnedWords(s.Name))
			}
		}
		if s.Kept() && change != ChangeExpire {
			return refusal(CodeProtected, keptNeverDeletedWords(s.Name))
		}
		if change == ChangeExpire && (!s.Kept() || s.KeptUntil.After(now)) {
			return refusal(CodeProtected, keptUntilWords(s.Name, s.KeptUntil.Format("2 Jan")))
		}
		// An undo is replaced by a newer one whoever took it ("the oldest
		// undo that is not kept, not pinned and not the target of a running
		// operation"); the limit and the room sweep never take the person's.
		if change != ChangeExpire && change != ChangeReplaceUndo && change != ChangeThin && (s.OwnerKind == "person" || s.ByKind == "owner" || s.ByKind == "cli") {
			return refusal(CodeProtected, personsNeverDeletedWords(s.Name))
		}
		if change == ChangeEvictLimit && s.IsUndo() {
			return refusal(CodeProtected, undoNotEvictedWords(s.Name))
		}
		if change == ChangeReplaceUndo && !s.IsUndo() {
			return refusal(CodeProtected, notAnUndoWords(s.Name))
		}
	}
	switch change {
	case ChangeRestore, ChangeFork, ChangeKeep, ChangeUnkeep, ChangeRename, ChangeNote:
		if s.State != StateReady && !(s.State == StateUnavailable && (change == ChangeRename || change == ChangeNote)) {
			return refusal(CodePlan, CannotBeChangedWords(s, change))
		}
	case ChangeDelete, ChangeExpire, ChangeEvictLimit, ChangeEvictRoom, ChangeReplaceUndo, ChangeThin:
		switch s.State {
		case StateTaking:
			return refusal(CodeBusy, stillBeingTakenWords(s.Name))
		case StateDeleting:
			return refusal(CodeBusy, alreadyDeletingWords(s.Name))
		case StateUnavailable:
			return refusal(CodePlan, unavailableWords(s.Name))
		}
		// The limit deletes an incomplete snapshot too: it counts toward
		// the limit, and a delete finishes it.
		if change.automatic() && s.State != StateReady && !(change == ChangeEvictLimit && s.State == StateIncomplete) {
			return refusal(CodePlan, snapshotIsWords(s.Name, StateWords(s.State)))
		}
	}
	if change == ChangeRestore && s.Guest != "current" {
		if s.Guest == "earlier" {
			return refusal(CodePlan, earlierGuestForkOnlyWords(s.Name, s.BoxName))
		}
		if s.UndoOf == nil {
			return refusal(CodePlan, heldCopyForkInsteadWords(s.Name))
		}
		// A ZFS restore's undo is a held copy: its restore is a swap.
	}
	// A snapshot without the identity reset neither forks nor is kept.
	if (change == ChangeKeep || change == ChangeFork) && s.ForkSafe == nil {
		return refusal(CodePlan, providers.NoResetWords(s.BoxName))
	}
	if change == ChangeUnkeep && !s.Kept() {
		return refusal(CodeConflict, notKeptWords(s.Name))
	}
	if change == ChangeUnkeep && s.BoxGoneAt != nil {
		return refusal(CodeConflict, outlivesBoxWords(s.Name))
	}
	return nil
}
