package api

import (
	"context"
	"net/http"

	"github.com/boxsnap/boxsnap/app/wire"

	"github.com/boxsnap/boxsnap/app/api/answers"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// listTrash lists the trash, the soonest to go first.
func (s boxRoutes) listTrash(w http.ResponseWriter, r *http.Request) {
	c := caller(r)
	list, err := s.boxes.Trash(r.Context(), c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	for i := range list {
		list[i].Box = answers.BoxView(c, list[i].Box)
	}
	writeJSON(w, http.StatusOK, wire.TrashAnswer{Trash: list})
}

func (s boxRoutes) trashOperation(w http.ResponseWriter, r *http.Request,
	start func(ctx context.Context, c snapshots.Caller, ref, requestID string) (*snapshots.Operation, error)) {
	ref := param(r, "box")
	request := r.URL.Query().Get("request")
	wait, err := waitParam(r)
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
	op, err := start(r.Context(), caller(r), ref, request)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.answerOperation(w, r, op, wait)
}
