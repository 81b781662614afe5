package web

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// unkeepSnapshot is "Stop keeping": the snapshot goes with the box again.
func (s *Server) unkeepSnapshot(w http.ResponseWriter, r *http.Request) {
	box, id := chi.URLParam(r, "box"), chi.URLParam(r, "id")
	if _, err := s.opts.Keeps.Unkeep(r.Context(), snapshots.Owner(), snapshots.KeepRequest{Box: box, Snapshot: id}); err != nil {
		s.refused(w, r, err)
		return
	}
	s.done(w, r, backOf(r, box), "It goes with the box again.")
}
