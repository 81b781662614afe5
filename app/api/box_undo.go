package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/wire"
)

// undoBox restores the box to its newest undo, of a reset or a restore.
func (s boxRoutes) undoBox(w http.ResponseWriter, r *http.Request) {
	box := param(r, "box")
	var body wire.UndoBody
	if err := decodeOptional(r, &body, "force and request"); err != nil {
		s.fail(w, r, err)
		return
	}
	wait, dry, err := waitAndDryRun(r)
	if err == nil {
		err = checkRef("box", box)
	}
	if err == nil {
		err = checkRequest(body.Request)
	}
	c := caller(r)
	if err == nil && !c.IsPerson() && body.Force {
		err = &badRequest{code: snapshots.CodeForbidden,
			words: "Only the person undoes past what the restore would end."}
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if dry {
		plan, err := s.plans.Undo(r.Context(), caller(r), box, body.Force)
		s.answer(w, r, plan, err)
		return
	}
	op, err := s.restores.Resets().UndoNewest(r.Context(), c, box, body.Request, body.Force)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.answerOperation(w, r, op, wait)
}
