package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

type boxesAnswer struct {
	Boxes []*snapshots.Box `json:"boxes"`
}

// listBoxes lists the boxes the caller may see.
func (s *server) listBoxes(w http.ResponseWriter, r *http.Request) {
	c := caller(r)
	boxes, err := s.boxes.List(r.Context(), c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ans := boxesAnswer{Boxes: []*snapshots.Box{}}
	for _, b := range boxes {
		ans.Boxes = append(ans.Boxes, boxView(c, b))
	}
	writeJSON(w, http.StatusOK, ans)
}
