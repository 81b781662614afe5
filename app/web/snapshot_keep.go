package web

import (
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
)

func (s *Server) showKeepDialog(w http.ResponseWriter, r *http.Request) {
	d, err := s.dialogs.KeepDialog(asked{r}, chi.URLParam(r, "box"), chi.URLParam(r, "id"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.renderDialog(w, r, http.StatusOK, d)
}

// keepSnapshot keeps a snapshot until the date chosen.
func (s *Server) keepSnapshot(w http.ResponseWriter, r *http.Request) {
	d, box, id, ok := s.postedDialog(w, r, s.dialogs.KeepDialog)
	if !ok {
		return
	}
	req := snapshots.KeepRequest{Box: box, Snapshot: id}
	if v := r.PostFormValue("until"); v != "" {
		t, perr := time.Parse(pagemodel.DateForm, v)
		if perr != nil {
			d.Error = "A keep date is a day, such as " + d.Until + "."
			s.renderDialog(w, r, http.StatusUnprocessableEntity, d)
			return
		}
		req.Until = &t
	}
	if _, err := s.opts.Keeps.Keep(r.Context(), snapshots.Owner(), req); err != nil {
		d.Error = pagemodel.RefusalWords(err)
		s.renderDialog(w, r, statusOf(err), d)
		return
	}
	s.done(w, r, backOf(r, box), "")
}
