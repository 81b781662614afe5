package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
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
	shares, err := s.opts.Contents.Shares(ctx, snapshots.Owner(), "")
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

func (s *Server) importResult(w http.ResponseWriter, r *http.Request, res *contents.ImportResult, err error) {
	if err != nil {
		p := s.importPageOf(r.Context())
		p.Error = refusalWords(err)
		s.render(w, r, statusOf(err), "import", p)
		return
	}
	s.done(w, r, "/import?"+url.Values{"box": {res.BoxName}}.Encode(), res.Words)
}

// importFiles imports the uploaded export files, streamed part by part into
// the data folder, checked whole before anything is published.
func (s *Server) importFiles(w http.ResponseWriter, r *http.Request) {
	longTransfer(w)
	r.Body = http.MaxBytesReader(w, r.Body, MaxImportBytes)
	var batch []*contents.Staged
	defer func() {
		for _, st := range batch {
			st.Remove()
		}
	}()
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	mr, err := r.MultipartReader()
	if mt != "multipart/form-data" || err != nil {
		s.importResult(w, r, nil, &snapshots.Refusal{Code: snapshots.CodeInvalid, Words: "Choose the export files to import."})
		return
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			s.importResult(w, r, nil, &snapshots.Refusal{Code: snapshots.CodeInvalid,
				Words: fmt.Sprintf("The upload was cut short or is over %d GiB. Nothing was imported.", MaxImportBytes>>30)})
			return
		}
		if part.FormName() != "file" || part.FileName() == "" {
			part.Close()
			continue
		}
		st, err := s.opts.Contents.Stage(r.Context(), part.FileName(), part)
		part.Close()
		if err != nil {
			s.importResult(w, r, nil, err)
			return
		}
		batch = append(batch, st)
	}
	res, err := s.opts.Contents.Import(r.Context(), snapshots.Owner(), batch)
	s.importResult(w, r, res, err)
}

// redeemCode redeems a share code: one of this install's, or with from,
// another's, whose copy is fetched from that boxsnap's share endpoint
// (Contents.RedeemFrom) and imported here.
func (s *Server) redeemCode(w http.ResponseWriter, r *http.Request) {
	code, from := strings.TrimSpace(r.PostFormValue("code")), strings.TrimSpace(r.PostFormValue("from"))
	if from == "" {
		res, err := s.opts.Contents.Redeem(r.Context(), snapshots.Owner(), code)
		s.importResult(w, r, res, err)
		return
	}
	longTransfer(w)
	res, err := s.opts.Contents.RedeemFrom(r.Context(), snapshots.Owner(), from, code)
	s.importResult(w, r, res, err)
}

// revokeShare ends a share code from the Import page.
func (s *Server) revokeShare(w http.ResponseWriter, r *http.Request) {
	if _, err := s.opts.Contents.RevokeShare(r.Context(), snapshots.Owner(), chi.URLParam(r, "id")); err != nil {
		s.importResult(w, r, nil, err)
		return
	}
	s.done(w, r, "/import", snapshots.RevokedWords(""))
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
