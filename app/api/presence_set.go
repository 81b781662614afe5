package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// setPresence records what the platform that runs agents reports about a
// box: threads' workspaces, the desktop's control, open terminals. Only the
// owner's token may.
func (s boxRoutes) setPresence(w http.ResponseWriter, r *http.Request) {
	ref := param(r, "box")
	var p snapshots.Presence
	if err := decode(r, &p, "workspaces, desktop and terminals"); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := checkRef("box", ref); err != nil {
		s.fail(w, r, err)
		return
	}
	b, err := s.boxes.SetPresence(r.Context(), caller(r), ref, p)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, b)
}
