package api

import (
	"fmt"
	"net/http"

	"github.com/boxsnap/boxsnap/app/wire"
)

// makeShare makes a share code for a snapshot: the person only. The code is
// in this answer and nowhere else, ever.
func (s snapshotMoves) makeShare(w http.ResponseWriter, r *http.Request) {
	box, ref := param(r, "box"), param(r, "snapshot")
	var body wire.ShareBody
	err := decodeOptional(r, &body, "days, optional")
	if err == nil {
		err = checkBoxAndSnapshot(box, ref)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	made, err := s.contents.MakeShare(r.Context(), caller(r), box, ref, body.Days)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, wire.ShareAnswer{Code: made.Code, Share: made.Share,
		Message: fmt.Sprintf("This code works until %s; it is shown only now. Its copy leaves out %s.",
			made.Share.ExpiresAt.UTC().Format("2 Jan 2006 15:04 UTC"), made.Share.RemovedWords())})
}
