package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
	"github.com/boxsnap/boxsnap/app/wire"
)

// listApprovals lists the requests waiting for the person's word (the
// person only); ?box= narrows them to one box.
func (s approvalRequests) listApprovals(w http.ResponseWriter, r *http.Request) {
	box := r.URL.Query().Get("box")
	if box != "" {
		b, err := s.core.Box(r.Context(), caller(r), box)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		box = b.ID
	}
	list, err := s.approvals.List(r.Context(), caller(r), box)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if list == nil {
		list = []*approvals.Approval{}
	}
	writeJSON(w, http.StatusOK, wire.ApprovalsAnswer{Approvals: list})
}
