package web

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// statusOf is the HTTP status a page answers err with: its refusal code's
// (codeStatus), or 500 for anything that is not a refusal.
func statusOf(err error) int {
	if ref, ok := snapshots.AsRefusal(err); ok {
		return codeStatus(ref.Code)
	}
	return http.StatusInternalServerError
}

// codeStatus is the one place where the pages turn a refusal's code into an
// HTTP status. A code it does not know is a conflict.
func codeStatus(code snapshots.Code) int {
	switch code {
	case snapshots.CodeInvalid:
		return http.StatusBadRequest
	case snapshots.CodeForbidden:
		return http.StatusForbidden
	case snapshots.CodeNotFound:
		return http.StatusNotFound
	case snapshots.CodeGone:
		return http.StatusGone
	case snapshots.CodeBackend:
		return http.StatusUnprocessableEntity
	case snapshots.CodeUnreachable:
		return http.StatusServiceUnavailable
	}
	// conflict, limit, room, locked, guard, busy, plan, cannot, protected,
	// running and request_reused.
	return http.StatusConflict
}
