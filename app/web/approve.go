package web

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
)

// approve gives the person's yes to a request from the pages.
func (s *Server) approve(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	back := pagemodel.SafeNext(r.PostFormValue("back"))
	if r.PostFormValue("back") == "" {
		back = "/approvals"
	}
	if _, err := s.opts.Approvals.Approve(r.Context(), snapshots.Owner(), id); err != nil {
		s.refused(w, r, err)
		return
	}
	s.done(w, r, back, "Approved: the restore runs, with an undo.")
}
