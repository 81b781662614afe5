package web

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
)

func (s *Server) showRestoreDialog(w http.ResponseWriter, r *http.Request) {
	d, err := s.dialogs.RestoreDialog(asked{r}, chi.URLParam(r, "box"), chi.URLParam(r, "id"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.renderDialog(w, r, http.StatusOK, d)
}

// restoreSnapshot restores, after checking the dialog's plan is the plan
// now; a guarded restore goes on only with "Restore anyway".
func (s *Server) restoreSnapshot(w http.ResponseWriter, r *http.Request) {
	d, box, id, ok := s.postedDialog(w, r, s.dialogs.RestoreDialog)
	if !ok {
		return
	}
	noUndo := d.NoUndo || r.PostFormValue("undo") != "1"
	op, err := s.opts.Restores.Restore(r.Context(), snapshots.Owner(), snapshots.RestoreRequest{Box: box, Snapshot: id,
		NoUndo: noUndo, Force: d.Force, RequestID: r.PostFormValue("request")})
	if err != nil {
		d.Error = pagemodel.RefusalWords(err)
		s.renderDialog(w, r, statusOf(err), d)
		return
	}
	s.watch(w, r, op.ID)
	s.done(w, r, backOf(r, box), "")
}
