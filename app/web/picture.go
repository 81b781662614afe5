package web

import (
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// showPicture serves a snapshot's picture of the screen through the core,
// which checks mayAct; it is never cached by a shared cache.
func (s *Server) showPicture(w http.ResponseWriter, r *http.Request) {
	p, err := s.opts.Pictures.Get(r.Context(), snapshots.Owner(), chi.URLParam(r, "id"))
	if err != nil {
		if ref, ok := snapshots.AsRefusal(err); ok {
			http.Error(w, ref.Words, codeStatus(ref.Code))
			return
		}
		s.fail(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "image/jpeg")
	h.Set("Content-Length", strconv.Itoa(len(p.JPEG)))
	h.Set("Cache-Control", "private, max-age=3600")
	_, _ = w.Write(p.JPEG)
}
