package web

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// TestRefusalCodesStatuses: a page answers each of the core's refusal codes
// with one status, chosen here and nowhere else, the same as the API's; an
// error that is no refusal is a 500.
func TestRefusalCodesStatuses(t *testing.T) {
	t.Parallel()
	want := map[snapshots.Code]int{
		snapshots.CodeNotFound:      http.StatusNotFound,
		snapshots.CodeInvalid:       http.StatusBadRequest,
		snapshots.CodeForbidden:     http.StatusForbidden,
		snapshots.CodeConflict:      http.StatusConflict,
		snapshots.CodeLimit:         http.StatusConflict,
		snapshots.CodeRoom:          http.StatusConflict,
		snapshots.CodeLocked:        http.StatusConflict,
		snapshots.CodeGuard:         http.StatusConflict,
		snapshots.CodeBusy:          http.StatusConflict,
		snapshots.CodePlan:          http.StatusConflict,
		snapshots.CodeCannot:        http.StatusConflict,
		snapshots.CodeProtected:     http.StatusConflict,
		snapshots.CodeGone:          http.StatusGone,
		snapshots.CodeRunning:       http.StatusConflict,
		snapshots.CodeBackend:       http.StatusUnprocessableEntity,
		snapshots.CodeUnreachable:   http.StatusServiceUnavailable,
		snapshots.CodeRequestReused: http.StatusConflict,
	}
	for _, code := range snapshots.Codes() {
		st, ok := want[code]
		if !ok {
			t.Errorf("the core's code %q has no status in this test", code)
			continue
		}
		err := fmt.Errorf("take: %w", &snapshots.Refusal{Code: code, Words: "No."})
		if got := statusOf(err); got != st {
			t.Errorf("statusOf(a %q refusal) = %d, want %d", code, got, st)
		}
	}
	if got := statusOf(errors.New("disk on fire")); got != http.StatusInternalServerError {
		t.Errorf("statusOf(an error) = %d, want 500", got)
	}
}
