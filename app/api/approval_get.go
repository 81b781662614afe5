package api

import (
	"net/http"
)

// getApproval reads one request, with its plan.
func (s approvalRequests) getApproval(w http.ResponseWriter, r *http.Request) {
	id := param(r, "approval")
	if err := checkRef("request", id); err != nil {
		s.fail(w, r, err)
		return
	}
	a, err := s.approvals.Get(r.Context(), caller(r), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}
