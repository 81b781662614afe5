package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/wire"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// restoreSnapshot restores a box to one of its snapshots.
func (s snapshotChanges) restoreSnapshot(w http.ResponseWriter, r *http.Request) {
	box, ref := param(r, "box"), param(r, "snapshot")
	var body wire.RestoreBody
	if err := decode(r, &body, "replace (true), and optionally noUndo, force and request"); err != nil {
		s.fail(w, r, err)
		return
	}
	wait, dry, err := waitAndDryRun(r)
	if err == nil {
		err = checkBoxAndSnapshot(box, ref)
	}
	if err == nil {
		err = checkRequest(body.Request)
	}
	if err == nil && (body.Replace == nil || !*body.Replace) {
		err = invalid("A restore needs replace: true. It replaces everything on %s since the snapshot.", box)
	}
	c := caller(r)
	if err == nil && !c.IsPerson() && (body.NoUndo || body.Force) {
		err = &badRequest{code: snapshots.CodeForbidden,
			words: "Only the person restores without an undo or past what the restore would end."}
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if dry {
		plan, err := s.plans.Restore(r.Context(), caller(r), snapshots.RestoreRequest{Box: box, Snapshot: ref, Replace: true, NoUndo: body.NoUndo, Force: body.Force})
		s.answer(w, r, plan, err)
		return
	}
	op, err := s.restores.Restore(r.Context(), c, snapshots.RestoreRequest{Box: box, Snapshot: ref, Replace: true,
		NoUndo: body.NoUndo, Force: body.Force, RequestID: body.Request})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.answerOperation(w, r, op, wait)
}
