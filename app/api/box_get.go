package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/api/answers"
	"github.com/boxsnap/boxsnap/app/wire"
)

// getBox answers one box the caller may see, by its name or ID.
func (s boxRoutes) getBox(w http.ResponseWriter, r *http.Request) {
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
	writeJSON(w, http.StatusOK, wire.BoxAnswer{Box: answers.BoxView(c, b), Stopped: s.boxes.StoppedWords(r.Context(), c, b)})
}
