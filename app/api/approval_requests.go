package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
)

// approvalRequests are the handlers of the requests for the person's word:
// listed, read, approved and declined. They hold the approvals seam, the
// core (a box named by ?box=, as the caller may see it) and the answer of
// an operation an approval starts, nothing else of the server.
type approvalRequests struct {
	failer
	approvalOperations
	core      *snapshots.Service
	approvals *approvals.Approvals
}

// approvalOperations is what approvalRequests ask of the operations: the
// answer of a restore an approval lets run.
type approvalOperations interface {
	answerOperation(w http.ResponseWriter, r *http.Request, op *snapshots.Operation, wait bool)
}
