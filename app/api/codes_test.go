package api

import (
	"net/http"
	"testing"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// TestRefusalCodesStatuses: the API answers each of the core's refusal
// codes with one status, chosen here and nowhere else; a refusal that
// holds for now is never a 2xx.
func TestRefusalCodesStatuses(t *testing.T) {
	t.Parallel()
	want := map[snapshots.Code]int{
		snapshots.CodeNotFound:    http.StatusNotFound,
		snapshots.CodeInvalid:     http.StatusBadRequest,
		snapshots.CodeForbidden:   http.StatusForbidden,
		snapshots.CodeConflict:    http.StatusConflict,
		snapshots.CodeLimit:       http.StatusConflict,
		snapshots.CodeRoom:        http.StatusConflict,
		snapshots.CodeLocked:      http.StatusConflict,
		snapshots.CodeGuard:       http.StatusConflict,
		snapshots.CodeBusy:        http.StatusConflict,
		snapshots.CodePlan:        http.StatusConflict,
		snapshots.CodeCannot:      http.StatusConflict,
		snapshots.CodeProtected:   http.StatusConflict,
		snapshots.CodeGone:        http.StatusGone,
		snapshots.CodeRunning:     http.StatusConflict,
		snapshots.CodeBackend:     http.StatusUnprocessableEntity,
		snapshots.CodeUnreachable: http.StatusServiceUnavailable,
		codeUnauthorized:          http.StatusUnauthorized,
		codeMethodNotAllowed:      http.StatusMethodNotAllowed,
		codeTooLarge:              http.StatusRequestEntityTooLarge,
		codeUnsupportedMediaType:  http.StatusUnsupportedMediaType,
		codeInternal:              http.StatusInternalServerError,
		codeFailed:                http.StatusConflict,
		codeUnknown:               http.StatusConflict,
	}
	for _, code := range snapshots.Codes() {
		if _, ok := want[code]; !ok {
			t.Errorf("the core's code %q has no status in this test", code)
		}
	}
	for code, status := range want {
		if got := statusOf(code); got != status {
			t.Errorf("statusOf(%q) = %d, want %d", code, got, status)
		}
	}
}
