package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots/plans"
)

// emptyTrash releases a box in the trash now: its unkept snapshots go with
// it. Only the person empties the trash. ?dry_run=true answers the plan.
func (s boxRoutes) emptyTrash(w http.ResponseWriter, r *http.Request) {
	dry, err := dryRunParam(r)
	if err == nil && dry {
		var plan *plans.ReleaseDry
		if err = checkRef("box", param(r, "box")); err == nil {
			plan, err = s.plans.EmptyTrash(r.Context(), caller(r), param(r, "box"))
		}
		s.answer(w, r, plan, err)
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.trashOperation(w, r, s.boxes.EmptyTrash)
}
