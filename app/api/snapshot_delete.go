package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// deleteSnapshot deletes one snapshot (?request=<ID> makes a repeat the
// same delete; ?wait=true answers once it is done).
func (s snapshotChanges) deleteSnapshot(w http.ResponseWriter, r *http.Request) {
	box, ref := param(r, "box"), param(r, "snapshot")
	request := r.URL.Query().Get("request")
	wait, dry, err := waitAndDryRun(r)
	if err == nil {
		err = checkBoxAndSnapshot(box, ref)
	}
	if err == nil {
		err = checkRequest(request)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if dry {
		plan, err := s.plans.Delete(r.Context(), caller(r), snapshots.DeleteRequest{Box: box, Snapshot: ref})
		s.answer(w, r, plan, err)
		return
	}
	op, err := s.keeps.Delete(r.Context(), caller(r), snapshots.DeleteRequest{Box: box, Snapshot: ref, RequestID: request})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.answerOperation(w, r, op, wait)
}
