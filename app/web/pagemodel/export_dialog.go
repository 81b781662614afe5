package pagemodel

import (
	"fmt"
	"net/url"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/views"
)

// ExportDialog is the Export dialog: which of the box's snapshots go in the
// file, and what the receiver holds already.
type ExportDialog struct {
	Page                     views.Page
	Title, Box, Action, Back string
	Error, First             string
	Disabled                 bool
	Snapshots                []ExportChoice
}

type ExportChoice struct {
	ID, Name, When string
	Checked        bool
}

func (dlg *DialogBuilder) ExportDialogOf(r Request, boxRef, ref string) (ExportDialog, error) {
	ctx := r.Context()
	sn, b, err := dlg.core.SnapshotOfBox(ctx, snapshots.Owner(), boxRef, ref)
	if err != nil {
		return ExportDialog{}, err
	}
	d := ExportDialog{Page: views.Page{Title: "Export", SignedIn: true, Nav: "boxes"}, Title: fmt.Sprintf("Export ‘%s’", sn.Name),
		Box: b.Name, Action: "/boxes/" + url.PathEscape(b.Name) + "/export", Back: backOf(r, b.Name), First: sn.ID}
	if why := dlg.rows.exportWhy(b, sn); why != "" {
		d.Disabled, d.Error = true, why
		return d, nil
	}
	list, err := dlg.core.List(ctx, snapshots.Owner(), snapshots.ListQuery{Box: b.ID})
	if err != nil {
		return d, err
	}
	tz, now := dlg.core.TimeZone(ctx), time.Now()
	for _, bs := range list {
		for _, x := range bs.Snapshots {
			if x.State != snapshots.StateReady {
				continue
			}
			d.Snapshots = append(d.Snapshots, ExportChoice{ID: x.ID, Name: x.Name, When: WhenWords(x.TakenAt, now, tz), Checked: x.ID == sn.ID})
		}
	}
	return d, nil
}
