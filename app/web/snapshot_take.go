package web

import (
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
)

func (s *Server) showTakeDialog(w http.ResponseWriter, r *http.Request) {
	d, err := s.dialogs.TakeDialog(asked{r}, chi.URLParam(r, "box"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.renderDialog(w, r, http.StatusOK, d)
}

// takeSnapshot takes a snapshot; its row appears at once, taking.
func (s *Server) takeSnapshot(w http.ResponseWriter, r *http.Request) {
	box := chi.URLParam(r, "box")
	_, sn, err := s.opts.Take.Take(r.Context(), snapshots.Owner(), take.TakeRequest{Box: box, Name: r.PostFormValue("name"),
		Note: r.PostFormValue("note"), Memory: r.PostFormValue("memory") == "1", RequestID: r.PostFormValue("request")})
	if err != nil {
		d, derr := s.dialogs.TakeDialog(asked{r}, box)
		if derr != nil {
			s.refused(w, r, err)
			return
		}
		d.Error, d.Name, d.Note = pagemodel.RefusalWords(err), r.PostFormValue("name"), r.PostFormValue("note")
		s.renderDialog(w, r, statusOf(err), d)
		return
	}
	s.done(w, r, backOf(r, box), fmt.Sprintf("Taking ‘%s’.", sn.Name))
}
