package api

import (
	"github.com/boxsnap/boxsnap/app/wire"
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// getOperation answers an operation as the caller may see it (an agent, its
// own thread's), with ?wait=true once it ends. It answers 200 in every
// state, with words for how it ended.
func (s *server) getOperation(w http.ResponseWriter, r *http.Request) {
	id := param(r, "operation")
	wait, err := waitParam(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	c := caller(r)
	op, err := s.core.Operation(r.Context(), c, id)
	if err == nil && wait {
		op, err = s.waitOp(r.Context(), c, op.ID)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.OperationAnswer{Operation: op, Message: s.stateWords(r, op)})
}

// stateWords says where an operation is, in words.
func (s *server) stateWords(r *http.Request, op *snapshots.Operation) string {
	switch op.State {
	case snapshots.OpDone:
		return s.describe(r.Context(), caller(r), op)
	case snapshots.OpFailed:
		w := "The " + op.Kind + " failed"
		if op.Error != nil {
			w += ": " + *op.Error
		}
		return w
	case snapshots.OpUnknown:
		return snapshots.UnknownWords(s.boxName(r.Context(), caller(r), op), op)
	}
	return runningWords(op)
}
