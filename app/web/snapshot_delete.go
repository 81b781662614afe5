package web

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
)

func (s *Server) showDeleteDialog(w http.ResponseWriter, r *http.Request) {
	d, err := s.dialogs.DeleteDialog(asked{r}, chi.URLParam(r, "box"), chi.URLParam(r, "id"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.renderDialog(w, r, http.StatusOK, d)
}

// deleteSnapshot deletes one snapshot; the row goes when it is gone.
func (s *Server) deleteSnapshot(w http.ResponseWriter, r *http.Request) {
	d, box, id, ok := s.postedDialog(w, r, s.dialogs.DeleteDialog)
	if !ok {
		return
	}
	if _, err := s.opts.Keeps.Delete(r.Context(), snapshots.Owner(), snapshots.DeleteRequest{Box: box, Snapshot: id}); err != nil {
		d.Error = pagemodel.RefusalWords(err)
		s.renderDialog(w, r, statusOf(err), d)
		return
	}
	s.done(w, r, backOf(r, box), "")
}
