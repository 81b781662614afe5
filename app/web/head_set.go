package web

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/heads"
)

// setHead is a row's "Set as head". It is a function of its own, not a
// method of Server, which holds enough handlers.
func setHead(s *Server, w http.ResponseWriter, r *http.Request) {
	box, id := chi.URLParam(r, "box"), chi.URLParam(r, "id")
	sn, err := s.opts.Heads.ChooseHead(r.Context(), snapshots.Owner(), box, id)
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.done(w, r, backOf(r, box), heads.HeadSetWords(sn.Name, sn.BoxName))
}
