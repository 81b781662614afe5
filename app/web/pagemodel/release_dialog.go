package pagemodel

import (
	"net/url"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/plans"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/views"
)

// ReleasePage is the release dialog's view data.
type ReleasePage struct {
	Page    views.Page
	Box     *snapshots.Box
	Goes    int
	Kept    int
	Message string
	// Stopped is the words of the last release, stopped because a held
	// copy could not be made; the page then offers "Release and delete it".
	Stopped string
	// Keepable counts its unkept snapshots that Keep could keep; KeepFirst
	// is where to keep them before the release, or "".
	Keepable  int
	KeepFirst string
	// Trash says where the release puts the box first, and what the trash
	// costs on its backend; empty when it goes at once.
	Trash string
	// GoesWords says that the box and everything on it go, after the trash
	// where it comes first.
	GoesWords string
}

// ReleaseDialog builds the release dialog of the named box: what goes with
// it, what stays kept, what Keep could keep first, and the trash it goes to
// first where Settings keeps one.
func (dlg *DialogBuilder) ReleaseDialog(r Request, box string) (ReleasePage, error) {
	ctx := r.Context()
	list, err := dlg.core.List(ctx, snapshots.Owner(), snapshots.ListQuery{Box: box})
	if err == nil && (len(list) != 1 || box == "") {
		_, err = dlg.core.Box(ctx, snapshots.Owner(), box)
		if err == nil {
			err = &snapshots.Refusal{Code: snapshots.CodeNotFound, Words: "No such box."}
		}
	}
	if err != nil {
		return ReleasePage{}, err
	}
	p := ReleasePage{Box: list[0].Box}
	for _, sn := range list[0].Snapshots {
		switch {
		case sn.Kept():
			p.Kept++
		default:
			p.Goes++
			if !sn.IsUndo() && sn.State == snapshots.StateReady {
				p.Keepable++
			}
		}
	}
	p.Message = plans.ReleaseSnapshotsWords(p.Box.Name, p.Goes, p.Kept)
	// Keep first: where some of its snapshots go and its backend can keep
	// them past the release, the page links to them on the Snapshots tab.
	if sp := dlg.core.Snapshotting(p.Box); p.Keepable > 0 && sp != nil && sp.KeepsPastRelease != providers.KeepsNo && sp.Fork != providers.ForkNone {
		p.KeepFirst = "/boxes/snapshots?q=" + url.QueryEscape(p.Box.Name)
	}
	p.Stopped, _ = dlg.boxes.ReleaseStopped(ctx, snapshots.Owner(), p.Box.ID)
	if p.Box.State == snapshots.BoxReady && p.Stopped == "" {
		if st, err := dlg.core.Settings(ctx); err == nil && st.TrashHours > 0 {
			p.Trash, _ = dlg.boxes.ReleaseWords(ctx, p.Box)
		}
	}
	p.GoesWords = plans.ReleaseGoesWords(p.Box.Name, p.Trash != "")
	return p, nil
}
