package web

import (
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// renewSnapshot is "Keep 30 more days" on a kept snapshot's row or the box
// card: the setting's days added to its keep date.
func (s *Server) renewSnapshot(w http.ResponseWriter, r *http.Request) {
	box, id := chi.URLParam(r, "box"), chi.URLParam(r, "id")
	if _, err := s.opts.Keeps.Renew(r.Context(), snapshots.Owner(), snapshots.KeepRequest{Box: box, Snapshot: id}); err != nil {
		s.refused(w, r, err)
		return
	}
	days := snapshots.DefaultKeepDays
	if st, err := s.opts.Core.Settings(r.Context()); err == nil {
		days = st.KeepDays
	}
	s.done(w, r, backOf(r, box), fmt.Sprintf("Keeping it %d more days.", days))
}
