package web

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// undoBox restores the box to its newest undo.
func (s *Server) undoBox(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "box")
	op, err := s.opts.Restores.Resets().UndoNewest(r.Context(), snapshots.Owner(), name, r.PostFormValue("request"), r.PostFormValue("force") == "1")
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.logger(r).Info("undo asked", "box", name, "operation", op.ID)
	s.done(w, r, "/boxes/"+name, "Undoing on "+name+": it goes back to its newest undo.")
}
