package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/wire"
)

// setBoxHistory sets a box's history settings: the person only.
func (s boxRoutes) setBoxHistory(w http.ResponseWriter, r *http.Request) {
	box := param(r, "box")
	var body wire.HistoryBody
	if err := decode(r, &body, "automatic and maxGiB (each true/false, a number, or null)"); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := checkRef("box", box); err != nil {
		s.fail(w, r, err)
		return
	}
	h, err := s.boxes.SetBoxHistory(r.Context(), caller(r), box, body.Automatic, body.MaxGiB)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, h)
}
