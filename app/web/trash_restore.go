package web

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// restoreFromTrash gives a box back from the trash, with its history.
func (s *Server) restoreFromTrash(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "box")
	op, err := s.boxes.RestoreFromTrash(r.Context(), snapshots.Owner(), name, r.PostFormValue("request"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.logger(r).Info("restore from the trash asked", "box", name, "operation", op.ID)
	s.done(w, r, "/boxes/"+name, snapshots.UntrashingWords(name))
}
