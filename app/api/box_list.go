package api

import (
	"context"
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/wire"
)

// listBoxes lists the boxes the caller may see.
func (s boxRoutes) listBoxes(w http.ResponseWriter, r *http.Request) {
	ans, err := s.boxesOf(r.Context(), caller(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ans)
}

// boxesOf is the boxes the caller may see, as GET /boxes and box_list
// answer them.
func (s lookups) boxesOf(ctx context.Context, c snapshots.Caller) (wire.BoxesAnswer, error) {
	boxes, err := s.boxes.List(ctx, c)
	if err != nil {
		return wire.BoxesAnswer{}, err
	}
	ans := wire.BoxesAnswer{Boxes: []*snapshots.Box{}}
	for _, b := range boxes {
		ans.Boxes = append(ans.Boxes, boxView(c, b))
	}
	return ans, nil
}
