package pagemodel

import (
	"fmt"
	"net/url"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// UnsaveDialog asks before a saved snapshot goes back to the automatic
// history, where thinning may delete it: focus starts on Cancel.
func (dlg *DialogBuilder) UnsaveDialog(r Request, boxRef, ref string) (Dialog, error) {
	sn, b, err := dlg.core.SnapshotOfBox(r.Context(), snapshots.Owner(), boxRef, ref)
	if err != nil {
		return Dialog{}, err
	}
	d := Dialog{Kind: "unsave", Title: fmt.Sprintf("Unsave ‘%s’?", sn.Name), Back: backOf(r, b.Name), Submit: "Unsave", Danger: true,
		Action: fmt.Sprintf("/boxes/%s/snapshots/%s/unsave", url.PathEscape(b.Name), sn.ID), Fingerprint: fingerprint(b, sn, nil,
			fmt.Sprint(sn.Automatic))}
	d.Lines = append(d.Lines, UnsaveAsksWords(sn.Name, b.Name))
	if sn.Automatic {
		d.Disabled, d.Error = true, snapshots.AutomaticAlreadyWords(sn.Name)
	}
	return d, nil
}
