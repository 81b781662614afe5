package web

import (
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
)

func (s *Server) showDeleteHistoryDialog(w http.ResponseWriter, r *http.Request) {
	d, err := s.dialogs.DeleteHistoryDialog(asked{r}, chi.URLParam(r, "box"), "")
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.renderDialog(w, r, http.StatusOK, d)
}

func (s *Server) deleteHistory(w http.ResponseWriter, r *http.Request) {
	box := chi.URLParam(r, "box")
	d, err := s.dialogs.DeleteHistoryDialog(asked{r}, box, "")
	if err != nil {
		s.refused(w, r, err)
		return
	}
	if d.Disabled {
		s.renderDialog(w, r, http.StatusConflict, d)
		return
	}
	if _, err := s.opts.Keeps.DeleteHistory(r.Context(), snapshots.Owner(), box, r.PostFormValue("confirm"), ""); err != nil {
		d.Error = pagemodel.RefusalWords(err)
		s.renderDialog(w, r, statusOf(err), d)
		return
	}
	s.reload(w, r, backOf(r, box), fmt.Sprintf("Deleting %s's automatic history.", box))
}
