package web

import (
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
)

func (s *Server) showSaveDialog(w http.ResponseWriter, r *http.Request) {
	d, err := s.dialogs.SaveDialog(asked{r}, chi.URLParam(r, "box"), chi.URLParam(r, "id"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.renderDialog(w, r, http.StatusOK, d)
}

// saveSnapshot saves it; the page is read again, as the snapshot moves
// from the timeline to the Snapshots card.
func (s *Server) saveSnapshot(w http.ResponseWriter, r *http.Request) {
	d, box, id, ok := s.postedDialog(w, r, s.dialogs.SaveDialog)
	if !ok {
		return
	}
	sn, err := s.opts.Keeps.Save(r.Context(), snapshots.Owner(), box, id, r.PostFormValue("name"))
	if err != nil {
		d.Error = pagemodel.RefusalWords(err)
		s.renderDialog(w, r, statusOf(err), d)
		return
	}
	s.reload(w, r, backOf(r, box), fmt.Sprintf("Saved ‘%s’.", sn.Name))
}
