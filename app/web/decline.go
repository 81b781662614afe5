package web

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
)

// decline gives the person's no to a request from the pages.
func (s *Server) decline(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	back := pagemodel.SafeNext(r.PostFormValue("back"))
	if r.PostFormValue("back") == "" {
		back = "/approvals"
	}
	if err := s.opts.Approvals.Decline(r.Context(), snapshots.Owner(), id); err != nil {
		s.refused(w, r, err)
		return
	}
	s.done(w, r, back, "Declined: nothing is restored.")
}
