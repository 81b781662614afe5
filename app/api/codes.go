package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// The API's own codes, beside the core's refusal codes (snapshots.Codes).
const (
	codeUnauthorized         snapshots.Code = "unauthorized"
	codeMethodNotAllowed     snapshots.Code = "method_not_allowed"
	codeTooLarge             snapshots.Code = "too_large"
	codeUnsupportedMediaType snapshots.Code = "unsupported_media_type"
	codeInternal             snapshots.Code = "internal"
	// codeNoRoute answers a path or a tool the API does not have.
	codeNoRoute = snapshots.CodeNotFound
	// codeFailed and codeUnknown answer an operation that failed, or whose
	// end is not known.
	codeFailed  snapshots.Code = "failed"
	codeUnknown snapshots.Code = "unknown"
)

// Codes are every code the API answers a refusal with, the same over REST,
// the JSON tools and MCP: the core's refusal codes, then the API's own.
func Codes() []snapshots.Code {
	return append(snapshots.Codes(), codeUnauthorized, codeMethodNotAllowed, codeTooLarge,
		codeUnsupportedMediaType, codeInternal, codeFailed, codeUnknown)
}

// statusOf is the HTTP status the API answers a code with: the one place
// where codes become statuses. A code it does not know is a conflict.
func statusOf(code snapshots.Code) int {
	switch code {
	case snapshots.CodeInvalid:
		return http.StatusBadRequest
	case codeUnauthorized:
		return http.StatusUnauthorized
	case snapshots.CodeForbidden:
		return http.StatusForbidden
	case snapshots.CodeNotFound:
		return http.StatusNotFound
	case codeMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case snapshots.CodeGone:
		return http.StatusGone
	case codeTooLarge:
		return http.StatusRequestEntityTooLarge
	case codeUnsupportedMediaType:
		return http.StatusUnsupportedMediaType
	case snapshots.CodeBackend:
		return http.StatusUnprocessableEntity
	case codeInternal:
		return http.StatusInternalServerError
	case snapshots.CodeUnreachable:
		return http.StatusServiceUnavailable
	}
	// conflict, limit, room, locked, guard, busy, plan, cannot, protected,
	// running, request_reused, and an operation that failed or whose end is
	// unknown.
	return http.StatusConflict
}
