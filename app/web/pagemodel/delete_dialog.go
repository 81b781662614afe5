package pagemodel

import (
	"fmt"
	"net/url"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/plans"
)

// FreesWords says what deleting a snapshot frees, where it is known.
func (dlg *DialogBuilder) FreesWords(b *snapshots.Box, sn *snapshots.Snapshot) string {
	return plans.DeleteFreesWords(b, sn, dlg.rows.WhereWords(b))
}

// DeleteDialog asks "Delete ‘Thu 09:15’? Frees 3.4 GB on pve-1.", and says
// when it is kept or an undo.
func (dlg *DialogBuilder) DeleteDialog(r Request, boxRef, ref string) (Dialog, error) {
	ctx := r.Context()
	sn, b, err := dlg.core.SnapshotOfBox(ctx, snapshots.Owner(), boxRef, ref)
	if err != nil {
		return Dialog{}, err
	}
	tz := dlg.core.TimeZone(ctx)
	d := Dialog{Kind: "delete", Title: plans.DeleteAskWords(sn.Name), Back: backOf(r, b.Name), Submit: "Delete", Danger: true,
		Action: fmt.Sprintf("/boxes/%s/snapshots/%s/delete", url.PathEscape(b.Name), sn.ID), Fingerprint: fingerprint(b, sn, nil)}
	d.Lines = append(d.Lines, plans.DeleteDialogLines(b, sn, dlg.rows.WhereWords(b), tz)...)
	if list, lerr := dlg.core.List(ctx, snapshots.Owner(), snapshots.ListQuery{Box: b.ID}); lerr == nil && len(list) > 0 {
		if werr := snapshots.Eligible(sn, snapshots.ChangeDelete, list[0].Pins[sn.ID], time.Now(), tz); werr != nil {
			d.Disabled, d.Error = true, RefusalWords(werr)
		}
	}
	return d, nil
}
