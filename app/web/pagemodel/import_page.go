package pagemodel

import (
	"context"
	"fmt"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/views"
)

// ImportPage is the Import page: export files, a share code, and the codes
// the person made.
type ImportPage struct {
	Page                          views.Page
	Error, Done, BoxName, BoxHref string
	Shares                        []ShareRow
	NoShares                      string // what the list says with no share code
}

// ShareRow is one share code on the Import page.
type ShareRow struct {
	ID, Snapshot, Until, Removed string
	Redeemed                     int
	Live                         bool
}

// ImportPageOf is the Import page: the share codes the person made, each
// with its snapshot and until when it works.
func (rb *RowBuilder) ImportPageOf(ctx context.Context) ImportPage {
	p := ImportPage{Page: views.Page{Title: "Import", SignedIn: true, Nav: "import"}, NoShares: snapshots.NoShareCodesWords}
	shares, err := rb.contents.Shares(ctx, snapshots.Owner(), "")
	if err != nil {
		return p
	}
	tz, now := rb.core.TimeZone(ctx), time.Now()
	for _, sh := range shares {
		row := ShareRow{ID: sh.ID, Snapshot: sh.SnapshotID, Redeemed: sh.Redeemed, Live: sh.Live(now), Removed: sh.RemovedWords(),
			Until: sh.ExpiresAt.In(tz).Format("Mon 2 Jan 15:04")}
		if sn, b, err := rb.core.Snapshot(ctx, snapshots.Owner(), sh.SnapshotID); err == nil {
			row.Snapshot = fmt.Sprintf("‘%s’ of %s", sn.Name, b.Name)
		}
		switch {
		case sh.RevokedAt != nil:
			row.Until = "revoked"
		case !row.Live:
			row.Until = "expired " + row.Until
		}
		p.Shares = append(p.Shares, row)
	}
	return p
}
