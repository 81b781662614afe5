package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/views"
)

// MaxImportBytes caps an import from the Import page, as the API's does.
const MaxImportBytes = 64 << 30

// importPage is the Import page: export files, a share code, and the codes
// the person made.
type importPage struct {
	Page                          views.Page
	Error, Done, BoxName, BoxHref string
	Shares                        []shareRow
	NoShares                      string // what the list says with no share code
}

type shareRow struct {
	ID, Snapshot, Until, Removed string
	Redeemed                     int
	Live                         bool
}

func (s *Server) importPageOf(ctx context.Context) importPage {
	p := importPage{Page: views.Page{Title: "Import", SignedIn: true, Nav: "import"}, NoShares: snapshots.NoShareCodesWords}
	shares, err := s.opts.Core.Contents().Shares(ctx, snapshots.Owner(), "")
	if err != nil {
		return p
	}
	tz, now := s.opts.Core.TimeZone(ctx), time.Now()
	for _, sh := range shares {
		row := shareRow{ID: sh.ID, Snapshot: sh.SnapshotID, Redeemed: sh.Redeemed, Live: sh.Live(now), Removed: sh.RemovedWords(),
			Until: sh.ExpiresAt.In(tz).Format("Mon 2 Jan 15:04")}
		if sn, b, err := s.opts.Core.Snapshot(ctx, snapshots.Owner(), sh.SnapshotID); err == nil {
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

// showImport is the Import page; after an import or a redeem (a
// post-redirect-get, so a reload posts nothing again) it says what was
// done, with the box, from the flash and ?box=.
func (s *Server) showImport(w http.ResponseWriter, r *http.Request) {
	p := s.importPageOf(r.Context())
	if said := s.flash(w, r); said != "" {
		if box := r.URL.Query().Get("box"); box != "" {
			p.Done, p.BoxName, p.BoxHref = said, box, "/boxes/"+url.PathEscape(box)
		} else {
			p.Page.Flash = said
		}
	}
	s.render(w, r, http.StatusOK, "import", p)
}

// TransferTimeout bounds an export's download or an import's upload, in
// place of the server's read and write timeouts, which bound every other
// request.
const TransferTimeout = time.Hour

// longTransfer moves the request's deadlines to TransferTimeout from now.
func longTransfer(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(TransferTimeout))
	_ = rc.SetWriteDeadline(time.Now().Add(TransferTimeout))
}
