package web

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
)

// checkOperation is a notice's Check now: the core observes an operation it
// could not confirm again and settles it.
func (s *Server) checkOperation(w http.ResponseWriter, r *http.Request) {
	op, err := s.opts.Core.CheckNow(r.Context(), snapshots.Owner(), chi.URLParam(r, "id"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	msg := "Checked: it is " + op.State + "."
	if op.State == snapshots.OpUnknown {
		msg = "Checked: boxsnap still cannot confirm it."
	}
	back := pagemodel.SafeNext(r.PostFormValue("back"))
	s.done(w, r, back, msg)
}
