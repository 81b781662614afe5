package web

import (
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
)

// startBox starts a stopped box from its card on Machines, and goes back
// there.
func (s *Server) startBox(w http.ResponseWriter, r *http.Request) {
	b, err := s.boxes.StartBox(r.Context(), snapshots.Owner(), chi.URLParam(r, "box"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	back := "/boxes"
	if v := r.PostFormValue("back"); v != "" {
		back = pagemodel.SafeNext(v)
	}
	s.done(w, r, back+"#box-"+url.PathEscape(b.Name), StartingWords(b.Name))
}
