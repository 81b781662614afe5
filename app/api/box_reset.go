package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/wire"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
)

// resetBox resets a box to a fresh one from its template, with an undo
// always taken (?wait=true answers once it is done).
func (s boxRoutes) resetBox(w http.ResponseWriter, r *http.Request) {
	box := param(r, "box")
	var body wire.ResetBody
	if err := decodeOptional(r, &body, "keepLogins, template, force and request"); err != nil {
		s.fail(w, r, err)
		return
	}
	wait, dry, err := waitAndDryRun(r)
	if err == nil {
		err = checkRef("box", box)
	}
	if err == nil && body.Template != "" {
		err = checkRef("template", body.Template)
	}
	if err == nil {
		err = checkRequest(body.Request)
	}
	c := caller(r)
	if err == nil && !c.IsPerson() && body.Force {
		err = &badRequest{code: snapshots.CodeForbidden,
			words: "Only the person resets past what the reset would end."}
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if dry {
		plan, err := s.plans.Reset(r.Context(), caller(r), restore.ResetRequest{Box: box, KeepLogins: body.KeepLogins, Template: body.Template, Force: body.Force})
		s.answer(w, r, plan, err)
		return
	}
	op, err := s.restores.Resets().Reset(r.Context(), c, restore.ResetRequest{Box: box, KeepLogins: body.KeepLogins,
		Template: body.Template, Force: body.Force, RequestID: body.Request})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.answerOperation(w, r, op, wait)
}
