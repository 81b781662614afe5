package web

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
)

func (s *Server) showUnsaveDialog(w http.ResponseWriter, r *http.Request) {
	d, err := s.dialogs.UnsaveDialog(asked{r}, chi.URLParam(r, "box"), chi.URLParam(r, "id"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.renderDialog(w, r, http.StatusOK, d)
}

// unsaveSnapshot makes a saved snapshot automatic again, once its dialog
// was read; the page is read again, as the snapshot moves from the
// Snapshots card to the timeline.
func (s *Server) unsaveSnapshot(w http.ResponseWriter, r *http.Request) {
	d, box, id, ok := s.postedDialog(w, r, s.dialogs.UnsaveDialog)
	if !ok {
		return
	}
	sn, err := s.opts.Keeps.Unsave(r.Context(), snapshots.Owner(), box, id)
	if err != nil {
		d.Error = pagemodel.RefusalWords(err)
		s.renderDialog(w, r, statusOf(err), d)
		return
	}
	s.reload(w, r, backOf(r, box), snapshots.UnsavedWords(sn.Name, ""))
}
