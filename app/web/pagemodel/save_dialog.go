package pagemodel

import (
	"fmt"
	"net/url"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// SaveDialog is Save…: an automatic snapshot becomes an ordinary one, with
// a name if given (moatbox's "Save with a name").
func (dlg *DialogBuilder) SaveDialog(r Request, boxRef, ref string) (Dialog, error) {
	ctx := r.Context()
	sn, b, err := dlg.core.SnapshotOfBox(ctx, snapshots.Owner(), boxRef, ref)
	if err != nil {
		return Dialog{}, err
	}
	settings, _ := dlg.core.Settings(ctx)
	d := Dialog{Kind: "save", Title: fmt.Sprintf("Save ‘%s’", sn.Name), Back: backOf(r, b.Name), Submit: "Save",
		Action: fmt.Sprintf("/boxes/%s/snapshots/%s/save", url.PathEscape(b.Name), sn.ID), Fingerprint: fingerprint(b, sn, nil),
		NamePlaceholder: sn.Name}
	d.Lines = append(d.Lines, fmt.Sprintf("A saved snapshot is no longer thinned: it stays until it is deleted, and counts in %s's %d.", b.Name, settings.PerBox))
	if !sn.Automatic {
		d.Disabled, d.Error = true, snapshots.SavedAlreadyWords(sn.Name)
	}
	return d, nil
}
