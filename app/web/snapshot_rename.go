package web

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
)

func (s *Server) showRenameDialog(w http.ResponseWriter, r *http.Request) {
	d, err := s.dialogs.RenameDialog(asked{r}, chi.URLParam(r, "box"), chi.URLParam(r, "id"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.renderDialog(w, r, http.StatusOK, d)
}

// renameSnapshot renames a snapshot, or shows the dialog again with why not.
func (s *Server) renameSnapshot(w http.ResponseWriter, r *http.Request) {
	box, id := chi.URLParam(r, "box"), chi.URLParam(r, "id")
	if _, err := s.opts.Keeps.Rename(r.Context(), snapshots.Owner(), box, id, r.PostFormValue("name")); err != nil {
		d, derr := s.dialogs.RenameDialog(asked{r}, box, id)
		if derr != nil {
			s.refused(w, r, err)
			return
		}
		d.Error, d.Name = pagemodel.RefusalWords(err), r.PostFormValue("name")
		s.renderDialog(w, r, statusOf(err), d)
		return
	}
	s.done(w, r, backOf(r, box), "")
}
