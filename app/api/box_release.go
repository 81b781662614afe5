package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// releaseBox releases a box: its snapshots that nobody kept go with it
// (?request=<ID> makes a repeat the same release; ?wait=true answers once
// it is done). ?deleteKept=true is the person's "Release and delete it":
// the kept snapshots not yet copied go too. ?dry_run=true answers the plan.
func (s boxRoutes) releaseBox(w http.ResponseWriter, r *http.Request) {
	ref := param(r, "box")
	request := r.URL.Query().Get("request")
	wait, dry, err := waitAndDryRun(r)
	if err == nil {
		err = checkRef("box", ref)
	}
	if err == nil {
		err = checkRequest(request)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	release := s.boxes.ReleaseBox
	switch r.URL.Query().Get("deleteKept") {
	case "", "false":
	case "true":
		release = s.boxes.ReleaseBoxDeletingKept
	default:
		s.fail(w, r, &snapshots.Refusal{Code: snapshots.CodeInvalid, Words: "deleteKept is true or false."})
		return
	}
	if dry {
		plan, err := s.plans.Release(r.Context(), caller(r), ref, r.URL.Query().Get("deleteKept") == "true")
		s.answer(w, r, plan, err)
		return
	}
	op, err := release(r.Context(), caller(r), ref, request)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.answerOperation(w, r, op, wait)
}
