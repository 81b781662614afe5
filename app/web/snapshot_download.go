package web

import (
	"mime"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// downloadSnapshot streams a file of a snapshot, or a folder as a tar.gz
// written as it is read (no copy of the whole), recorded in the box log.
func (s *Server) downloadSnapshot(w http.ResponseWriter, r *http.Request) {
	c := snapshots.Owner()
	sn, _, err := s.opts.Core.SnapshotOfBox(r.Context(), c, chi.URLParam(r, "box"), chi.URLParam(r, "id"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	d, err := s.opts.Contents.OpenDownload(r.Context(), c, sn.ID, r.URL.Query().Get("path"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	longTransfer(w) // a large folder streams past the server's write timeout
	h := w.Header()
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": d.Name}))
	h.Set("Cache-Control", "private, no-store")
	if d.Folder {
		h.Set("Content-Type", "application/gzip")
	} else {
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Length", strconv.FormatInt(d.Size, 10))
	}
	w.WriteHeader(http.StatusOK)
	if err := d.WriteTo(r.Context(), w); err != nil {
		// The answer has begun: it ends as an error (the connection cut),
		// never as a whole download. middleware.Recoverer passes it on.
		s.logger(r).Warn("download cut short", "snapshot", sn.ID, "err", err)
		panic(http.ErrAbortHandler)
	}
}
