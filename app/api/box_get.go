package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// getBox answers one box the caller may see, by its name or ID.
func (s *server) getBox(w http.ResponseWriter, r *http.Request) {
	ref := param(r, "box")
	if err := checkRef("box", ref); err != nil {
		s.fail(w, r, err)
		return
	}
	c := caller(r)
	b, err := s.core.Box(r.Context(), c, ref)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, boxAnswer{Box: boxView(c, b), Stopped: s.core.Boxes().StoppedWords(r.Context(), c, b)})
}

// boxAnswer is one box as GET /boxes/{box} answers it: the box, and why
// its backend stopped it by itself, when it did (it reached its disk
// bound).
type boxAnswer struct {
	*snapshots.Box
	Stopped string `json:"stopped,omitempty"`
}
