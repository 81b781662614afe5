package pagemodel

import (
	"fmt"
	"net/url"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/views"
)

// ShareDialog is the Share code dialog: what the copy leaves out and how
// long the code works; once made, the code, shown this once.
type ShareDialog struct {
	Page                          views.Page
	Title, Snapshot, Action, Back string
	Error, Code, Until            string
	Removed                       []string
	Blocked                       []providers.Finding
	BlockedWord                   string
	Days, MaxDays                 int
	Disabled                      bool
}

func (dlg *DialogBuilder) ShareDialogOf(r Request, boxRef, ref string) (ShareDialog, error) {
	p, err := dlg.contents.PlanShare(r.Context(), snapshots.Owner(), boxRef, ref)
	if p == nil {
		return ShareDialog{}, err
	}
	d := ShareDialog{Page: views.Page{Title: "Share code", SignedIn: true, Nav: "boxes"}, Title: fmt.Sprintf("A share code for ‘%s’", p.Snapshot.Name),
		Snapshot: p.Snapshot.Name, Back: backOf(r, p.Box.Name), Removed: p.Removed, Blocked: p.Blocked, BlockedWord: contents.BlockedWord, Days: p.Days, MaxDays: snapshots.MaxShareDays,
		Action: fmt.Sprintf("/boxes/%s/snapshots/%s/share", url.PathEscape(p.Box.Name), p.Snapshot.ID)}
	if err != nil {
		d.Disabled, d.Error = true, RefusalWords(err)
	}
	return d, nil
}
