package api

import (
	"context"
	"net/http"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
)

// The MCP SDK here has no tasks (long-running calls a client polls), so a
// long operation is waited on and polled through box_operation, and its
// JSON twin POST /api/v1/tools/box_operation: every long tool's answer
// names its operation's ID (or its request's, where it asked the person)
// and says how to poll it.

// MaxPollWait bounds box_operation's wait: a call holds at most this long,
// then answers the state, to be asked again.
const MaxPollWait = 60

// pollRecheck is how often a wait on a request reads it again: the
// person's answer is not notified to waits.
const pollRecheck = 250 * time.Millisecond

// StateNeedsInput is the state of a restore waiting for the person's word.
const StateNeedsInput = "needs input"

// operationParams are box_operation's parameters: an operation's ID or a
// request's, and how many seconds to wait for it to end.
type operationParams struct {
	Operation string `json:"operation"`
	Wait      int    `json:"wait"`
}

// pollAnswer is box_operation's answer: the state in words, and the
// operation once there is one. State is the operation's (running, done,
// failed, unknown), or a request's: needs input while it waits for the
// person's word, declined or expired.
type pollAnswer struct {
	Message   string               `json:"message"`
	State     string               `json:"state"`
	Request   string               `json:"request,omitempty"`
	Operation *snapshots.Operation `json:"operation,omitempty"`
}

// toolOperation is box_operation: the state of an operation of the
// caller's own (an agent's: its thread's), or of its request for the
// person's word, waiting up to wait seconds for it to end.
func (s *server) toolOperation(w http.ResponseWriter, r *http.Request) {
	var p operationParams
	if err := decode(r, &p, "operation and wait"); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := checkRef("operation", p.Operation); err != nil {
		s.fail(w, r, err)
		return
	}
	if p.Wait < 0 || p.Wait > MaxPollWait {
		s.fail(w, r, invalid("%s", pollWaitWords(MaxPollWait)))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), time.Duration(p.Wait)*time.Second)
	defer cancel()
	a, err := s.poll(ctx, r, p.Operation)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

// poll answers id's state once it ends or ctx does: a request waits for
// the person's word, then for the restore it started.
func (s *server) poll(ctx context.Context, r *http.Request, id string) (pollAnswer, error) {
	c := caller(r)
	// The reads are not cut by ctx: ctx bounds the wait only.
	read := context.WithoutCancel(ctx)
	var out pollAnswer
	if snapshots.ValidID(approvals.PrefixApproval, id) {
		out.Request = id
		for {
			a, err := s.approvals.Asking(read, c, id)
			if err != nil {
				return out, err
			}
			if a.State == approvals.ApprovalApproved && a.Operation != nil {
				id = *a.Operation
				break
			}
			if a.State != approvals.ApprovalPending {
				out.State = a.State
				if a.Answer != nil {
					out.Message = *a.Answer
				}
				return out, nil
			}
			if ctx.Err() != nil {
				out.State, out.Message = StateNeedsInput, needsInputWords(a.ID, a.BoxName, a.SnapshotName)
				return out, nil
			}
			t := time.NewTimer(pollRecheck)
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
		}
	}
	op, err := s.core.Operation(read, c, id)
	if err != nil {
		return out, err
	}
	if op.State == snapshots.OpRunning && ctx.Err() == nil {
		if _, err := s.core.Wait(ctx, op.ID); err != nil {
			return out, err
		}
		if op, err = s.core.Operation(read, c, op.ID); err != nil {
			return out, err
		}
	}
	out.Operation, out.State, out.Message = op, op.State, s.stateWords(r, op)
	return out, nil
}
