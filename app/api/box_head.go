package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/wire"
)

// setBoxHead chooses a box's head without a restore, and answers the head
// and its lineage as GET /boxes/{box}/lineage does.
func (s *server) setBoxHead(w http.ResponseWriter, r *http.Request) {
	box := param(r, "box")
	var body wire.HeadBody
	if err := decode(r, &body, "snapshot"); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := checkBoxAndSnapshot(box, body.Snapshot); err != nil {
		s.fail(w, r, err)
		return
	}
	if _, err := s.core.ChooseHead(r.Context(), caller(r), box, body.Snapshot); err != nil {
		s.fail(w, r, err)
		return
	}
	l, err := s.lineageOf(r.Context(), caller(r), box, "")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, l)
}
