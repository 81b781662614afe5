package api

import (
	"context"
	"net/http"
	"time"

	"github.com/boxsnap/boxsnap/app/wire"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// keepSnapshot keeps a snapshot: the person only.
func (s snapshotChanges) keepSnapshot(w http.ResponseWriter, r *http.Request) {
	box, ref := param(r, "box"), param(r, "snapshot")
	var body wire.KeepBody
	if err := decodeOptional(r, &body, "days or until, and request, all optional"); err != nil {
		s.fail(w, r, err)
		return
	}
	wait, err := waitParam(r)
	if err == nil {
		err = checkBoxAndSnapshot(box, ref)
	}
	if err == nil {
		err = checkRequest(body.Request)
	}
	if err == nil && body.Days != 0 && body.Until != "" {
		err = invalid("Keep takes days or until, not both.")
	}
	if err == nil && body.Days < 0 {
		err = invalid("%s", snapshots.KeepDaysWords(snapshots.MaxKeepDays))
	}
	req := snapshots.KeepRequest{Box: box, Snapshot: ref, Days: body.Days, RequestID: body.Request}
	if err == nil && body.Until != "" {
		u, perr := time.Parse(time.DateOnly, body.Until)
		if perr != nil {
			err = invalid("until is a date such as 2026-12-29.")
		}
		req.Until = &u
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	op, err := s.keeps.Keep(r.Context(), caller(r), req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.answerOperation(w, r, op, wait)
}

// keepChange runs a change of a kept snapshot that takes nothing but an
// optional request ID: Unkeep and Renew.
func (s snapshotChanges) keepChange(w http.ResponseWriter, r *http.Request, change func(context.Context, snapshots.Caller, snapshots.KeepRequest) (*snapshots.Operation, error)) {
	box, ref := param(r, "box"), param(r, "snapshot")
	var body wire.RequestBody
	if err := decodeOptional(r, &body, "request, optional"); err != nil {
		s.fail(w, r, err)
		return
	}
	wait, err := waitParam(r)
	if err == nil {
		err = checkBoxAndSnapshot(box, ref)
	}
	if err == nil {
		err = checkRequest(body.Request)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	op, err := change(r.Context(), caller(r), snapshots.KeepRequest{Box: box, Snapshot: ref, RequestID: body.Request})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.answerOperation(w, r, op, wait)
}
