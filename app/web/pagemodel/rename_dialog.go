package pagemodel

import (
	"fmt"
	"net/url"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

func (dlg *DialogBuilder) RenameDialog(r Request, boxRef, ref string) (Dialog, error) {
	sn, b, err := dlg.core.SnapshotOfBox(r.Context(), snapshots.Owner(), boxRef, ref)
	if err != nil {
		return Dialog{}, err
	}
	return Dialog{Kind: "rename", Title: fmt.Sprintf("Rename ‘%s’", sn.Name), Back: backOf(r, b.Name), Submit: "Rename", Name: sn.Name,
		Action: fmt.Sprintf("/boxes/%s/snapshots/%s/rename", url.PathEscape(b.Name), sn.ID)}, nil
}
