package api

import (
	"context"
	"net/http"
	"time"

	"github.com/boxsnap/boxsnap/app/wire"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// ToolWait bounds how long a tool, or a REST call with wait=true, waits for
// the operation it started; the request's own context can end it sooner.
// Past it, the answer is the running operation, to ask again.
const ToolWait = 10 * time.Minute

// waitOp waits for the operation to end (the core's Wait ends the moment
// its operation's end is notified), or for ctx or ToolWait, and returns it
// as the caller sees it then.
func (s operations) waitOp(ctx context.Context, c snapshots.Caller, id string) (*snapshots.Operation, error) {
	// The caller may see it: ask first, so Wait never reads another's.
	if _, err := s.Core.Operation(ctx, c, id); err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, ToolWait)
	defer cancel()
	if _, err := s.Core.Wait(wctx, id); err != nil {
		return nil, err
	}
	return s.Core.Operation(context.WithoutCancel(ctx), c, id)
}

// runTool admits a tool's operation with start, waits for it, and answers
// for it when it did not end done: the refusal, the failure or the
// unconfirmed words, or 202 while it still runs. It returns the done
// operation and true when the tool should answer its result.
func (s operations) runTool(w http.ResponseWriter, r *http.Request, start func(context.Context, snapshots.Caller) (*snapshots.Operation, error)) (*snapshots.Operation, bool) {
	c := caller(r)
	mark := s.Core.WaitMark()
	op, err := start(r.Context(), c)
	if err == nil && snapshots.MaySeeOperation(c, op) {
		// The caller's own operation, as start answered it: no read to ask
		// whether it may see it, and the end the wait hears is the answer.
		wctx, cancel := context.WithTimeout(r.Context(), ToolWait)
		op, err = s.Core.WaitSince(wctx, op, mark)
		cancel()
	} else if err == nil {
		op, err = s.waitOp(r.Context(), c, op.ID)
	}
	if err != nil {
		s.fail(w, r, err)
		return nil, false
	}
	if s.endedBadly(w, r, op) {
		return nil, false
	}
	if op.State != snapshots.OpDone {
		writeJSON(w, http.StatusAccepted, wire.OperationAnswer{Operation: op, Message: runningWords(op)})
		return nil, false
	}
	return op, true
}

// answerOperation answers an operation just admitted: at once (202) unless
// wait, else once it ends: 200 with its words when done, the error shape
// when it failed or could not be confirmed, 202 when it still runs.
func (s operations) answerOperation(w http.ResponseWriter, r *http.Request, op *snapshots.Operation, wait bool) {
	c := caller(r)
	if wait {
		var err error
		if op, err = s.waitOp(r.Context(), c, op.ID); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	if s.endedBadly(w, r, op) {
		return
	}
	if op.State != snapshots.OpDone {
		writeJSON(w, http.StatusAccepted, wire.OperationAnswer{Operation: op, Message: runningWords(op)})
		return
	}
	writeJSON(w, http.StatusOK, wire.OperationAnswer{Operation: op, Message: s.Describe(r.Context(), c, op)})
}

// endedBadly answers a failed or unconfirmed operation in the error shape,
// with the operation's ID, and reports whether it did.
func (s operations) endedBadly(w http.ResponseWriter, r *http.Request, op *snapshots.Operation) bool {
	switch op.State {
	case snapshots.OpFailed:
		why, observed := "", ""
		if op.Error != nil {
			why = *op.Error
		}
		if op.Observed != nil {
			observed = *op.Observed
		}
		words := snapshots.UnfinishedWords("The "+string(op.Kind), why, observed)
		writeJSON(w, statusOf(codeFailed), wire.ErrorBody{Error: wire.APIError{Code: codeFailed, Message: words, Operation: op.ID}})
		return true
	case snapshots.OpUnknown:
		writeJSON(w, statusOf(codeUnknown), wire.ErrorBody{Error: wire.APIError{Code: codeUnknown,
			Message:   snapshots.UnknownWords(s.BoxName(r.Context(), caller(r), op), op) + " Check now: POST /api/v1/operations/" + op.ID + "/check.",
			Operation: op.ID}})
		return true
	}
	return false
}

func runningWords(op *snapshots.Operation) string {
	return snapshots.RunningWords(string(op.Kind), op.ID, op.Step) + " " + pollWords(op.ID)
}

// waitParam reads ?wait=true.
func waitParam(r *http.Request) (bool, error) { return boolParam(r, "wait") }

// boolParam reads a query's true or false (1 or 0; left out is false).
func boolParam(r *http.Request, name string) (bool, error) {
	switch r.URL.Query().Get(name) {
	case "", "false", "0":
		return false, nil
	case "true", "1":
		return true, nil
	}
	return false, invalid("%s is true or false.", name)
}
