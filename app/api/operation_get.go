package api

import (
	"context"
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
	"github.com/boxsnap/boxsnap/app/wire"
)

// getOperation answers an operation as the caller may see it (an agent, its
// own thread's), or the caller's request for the person's word, once it
// ends or the wait runs out: GET /operations/{operation} (?wait=true) and
// box_operation (its body names both). It answers 200 in every state, with
// words for how it ended; a request waiting for the person is "needs
// input", and an approved one answers the restore it started.
func (s *server) getOperation(w http.ResponseWriter, r *http.Request) {
	id, wait, err := operationAsked(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	c := caller(r)
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	defer cancel()
	var a wire.PollAnswer
	if snapshots.ValidID(approvals.PrefixApproval, id) {
		ap, err := s.approvals.Await(ctx, c, id)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		a.Request, a.State = ap.ID, ap.State
		if ap.State == approvals.ApprovalPending {
			a.State, a.Message = approvals.NeedsInput, approvals.NeedsInputWords(ap)
		} else if ap.Answer != nil {
			a.Message = *ap.Answer
		}
		if ap.State != approvals.ApprovalApproved || ap.Operation == nil {
			writeJSON(w, http.StatusOK, a)
			return
		}
		id = *ap.Operation
	}
	op, err := s.Core.Operation(r.Context(), c, id)
	if err == nil && op.State == snapshots.OpRunning && ctx.Err() == nil {
		if _, err = s.Core.Wait(ctx, op.ID); err == nil {
			op, err = s.Core.Operation(context.WithoutCancel(ctx), c, id)
		}
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	a.Operation, a.State, a.Message = op, op.State, s.stateWords(r, op)
	writeJSON(w, http.StatusOK, a)
}

// stateWords says where an operation is, in words.
func (s *server) stateWords(r *http.Request, op *snapshots.Operation) string {
	switch op.State {
	case snapshots.OpDone:
		return s.Describe(r.Context(), caller(r), op)
	case snapshots.OpFailed:
		w := "The " + op.Kind + " failed"
		if op.Error != nil {
			w += ": " + *op.Error
		}
		return w
	case snapshots.OpUnknown:
		return snapshots.UnknownWords(s.BoxName(r.Context(), caller(r), op), op)
	}
	return runningWords(op)
}
