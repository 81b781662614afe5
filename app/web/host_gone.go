package web

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/hosts"
)

// goneHost is the person's word that a host is gone for good.
func goneHost(s *Server, w http.ResponseWriter, r *http.Request) {
	h, err := s.opts.Hosts.MarkGone(r.Context(), snapshots.Owner(), chi.URLParam(r, "host"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.done(w, r, "/settings/hosts", hosts.MarkedGoneWords(h.Name, h.Boxes))
}
