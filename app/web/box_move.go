package web

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/hosts"
)

// moveBox moves the box named in the form to the host named in it.
func moveBox(s *Server, w http.ResponseWriter, r *http.Request) {
	box, host := r.PostFormValue("box"), r.PostFormValue("host")
	if _, err := s.opts.Hosts.Move(r.Context(), snapshots.Owner(), box, host); err != nil {
		s.refused(w, r, err)
		return
	}
	s.done(w, r, "/settings/hosts", hosts.MovingWords(box, host))
}
