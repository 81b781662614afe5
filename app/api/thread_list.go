package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/wire"
)

// listThreads lists the threads: every one for the owner, its own for an
// agent.
func (s *server) listThreads(w http.ResponseWriter, r *http.Request) {
	ts, err := s.Boxes.Threads(r.Context(), caller(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if ts == nil {
		ts = []*snapshots.Thread{}
	}
	writeJSON(w, http.StatusOK, wire.ThreadsAnswer{Threads: ts})
}
