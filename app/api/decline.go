package api

import (
	"net/http"
)

// decline gives the person's no: nothing is restored.
func (s approvalRequests) decline(w http.ResponseWriter, r *http.Request) {
	id := param(r, "approval")
	if err := checkRef("request", id); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.approvals.Decline(r.Context(), caller(r), id); err != nil {
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
