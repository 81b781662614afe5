package api

import (
	"net/http"
)

// boxHistory answers a box's history settings.
func (s boxRoutes) boxHistory(w http.ResponseWriter, r *http.Request) {
	box := param(r, "box")
	if err := checkRef("box", box); err != nil {
		s.fail(w, r, err)
		return
	}
	h, err := s.boxes.BoxHistorySettings(r.Context(), caller(r), box)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, h)
}
