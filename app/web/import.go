package web

import (
	"net/http"
	"net/url"
	"time"
)

// MaxImportBytes caps an import from the Import page, as the API's does.
const MaxImportBytes = 64 << 30

// showImport is the Import page; after an import or a redeem (a
// post-redirect-get, so a reload posts nothing again) it says what was
// done, with the box, from the flash and ?box=.
func (s *Server) showImport(w http.ResponseWriter, r *http.Request) {
	p := s.rows.ImportPageOf(r.Context())
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
