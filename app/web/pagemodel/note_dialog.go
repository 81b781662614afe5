package pagemodel

import (
	"fmt"
	"net/url"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

func (dlg *DialogBuilder) NoteDialog(r Request, boxRef, ref string) (Dialog, error) {
	sn, b, err := dlg.core.SnapshotOfBox(r.Context(), snapshots.Owner(), boxRef, ref)
	if err != nil {
		return Dialog{}, err
	}
	d := Dialog{Kind: "note", Title: fmt.Sprintf("Note on ‘%s’", sn.Name), Back: backOf(r, b.Name), Submit: "Save note",
		Action: fmt.Sprintf("/boxes/%s/snapshots/%s/note", url.PathEscape(b.Name), sn.ID)}
	if sn.Note != nil {
		d.Note = *sn.Note
	}
	return d, nil
}
