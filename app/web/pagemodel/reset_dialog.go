package pagemodel

import (
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/plans"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	"github.com/boxsnap/boxsnap/views"
)

// ResetPage is the reset dialog's view data.
type ResetPage struct {
	Page    views.Page
	Box     *snapshots.Box
	Preview *restore.ResetPreview
	Guard   []string
	Error   string
	// Becomes and UndoLine are the dialog's words, which a reset's dry run
	// says too.
	Becomes, UndoLine string
}

// ResetDialog builds the reset dialog of the named box: what it becomes,
// what goes (the guard), and the undo taken first; errWords is a refused
// post's words, shown above them.
func (dlg *DialogBuilder) ResetDialog(r Request, box, errWords string) (ResetPage, error) {
	ctx := r.Context()
	b, err := dlg.core.Box(ctx, snapshots.Owner(), box)
	if err != nil {
		return ResetPage{}, err
	}
	pv, err := dlg.restores.Resets().PreviewReset(ctx, snapshots.Owner(), b.ID, "")
	if err != nil {
		return ResetPage{}, err
	}
	return ResetPage{Box: b, Preview: pv, Guard: dlg.restores.Guard(ctx, snapshots.Owner(), b), Error: errWords,
		Becomes: plans.ResetBecomesWords(b.Name, pv.From), UndoLine: plans.ResetUndoLineWords}, nil
}
