package api

import (
	"net/http"
)

// approve gives the person's yes: the restore runs, as the asking agent's,
// on it; a plan that changed refuses and shows the new plan.
func (s approvalRequests) approve(w http.ResponseWriter, r *http.Request) {
	id := param(r, "approval")
	if err := checkRef("request", id); err != nil {
		s.fail(w, r, err)
		return
	}
	wait, err := waitParam(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	op, err := s.approvals.Approve(r.Context(), caller(r), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.answerOperation(w, r, op, wait)
}
