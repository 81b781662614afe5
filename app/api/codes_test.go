package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// TestRefusalCodesStatuses: the API answers each of the core's refusal
// codes with one status, chosen here and nowhere else; a refusal that
// holds for now is never a 2xx.
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
		codeUnauthorized:            http.StatusUnauthorized,
		codeMethodNotAllowed:        http.StatusMethodNotAllowed,
		codeTooLarge:                http.StatusRequestEntityTooLarge,
		codeUnsupportedMediaType:    http.StatusUnsupportedMediaType,
		codeInternal:                http.StatusInternalServerError,
		codeFailed:                  http.StatusConflict,
		codeUnknown:                 http.StatusConflict,
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

// TestOpenAPISaysEachCode: openapi.json's Error.code names every code the
// API answers with, each with the status statusOf gives it.
func TestOpenAPISaysEachCode(t *testing.T) {
	t.Parallel()
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Properties map[string]struct {
						Description string `json:"description"`
					} `json:"properties"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatal(err)
	}
	says := doc.Components.Schemas["Error"].Properties["error"].Properties["code"].Description
	for _, code := range Codes() {
		st := statusOf(code)
		if st == http.StatusConflict {
			if !regexp.MustCompile(`409 for [^.]*\b` + string(code) + `\b`).MatchString(says) {
				t.Errorf("openapi.json's Error.code does not list %s among the 409s: %q", code, says)
			}
			continue
		}
		if !strings.Contains(says, fmt.Sprintf("%s %d", code, st)) {
			t.Errorf("openapi.json's Error.code does not say %s %d: %q", code, st, says)
		}
	}
}
