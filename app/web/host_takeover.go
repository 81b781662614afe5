package web

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/hosts"
)

// takeoverHost carries a gone host's boxes over to this host.
func takeoverHost(s *Server, w http.ResponseWriter, r *http.Request) {
	res, err := s.opts.Hosts.TakeOver(r.Context(), snapshots.Owner(), chi.URLParam(r, "host"), "")
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.done(w, r, "/settings/hosts", hosts.TakenOverWords(res))
}
