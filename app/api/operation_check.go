package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/wire"
)

// checkOperation is Check now: it observes an operation that could not be
// confirmed again, from the step it reached.
func (s *server) checkOperation(w http.ResponseWriter, r *http.Request) {
	c := caller(r)
	op, err := s.Core.CheckNow(r.Context(), c, param(r, "operation"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.OperationAnswer{Operation: op, Message: s.stateWords(r, op)})
}
