package api

import (
	"context"
	"net/http"

	"github.com/boxsnap/boxsnap/app/api/toolparams"
	"github.com/boxsnap/boxsnap/app/wire"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
)

// toolReset is box_reset: the agent's own box made fresh from its
// template, an undo always taken.
func (s agentTools) toolReset(w http.ResponseWriter, r *http.Request) {
	var p toolparams.ResetToolParams
	if err := decode(r, &p, "box, keep_logins, template, request and dry_run"); err != nil {
		s.fail(w, r, err)
		return
	}
	err := checkRef("box", p.Box)
	if err == nil && p.Template != "" {
		err = checkRef("template", p.Template)
	}
	if err == nil {
		err = checkRequest(p.Request)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if p.DryRun {
		plan, err := s.plans.Reset(r.Context(), caller(r), restore.ResetRequest{Box: p.Box, KeepLogins: p.KeepLogins, Template: p.Template})
		s.answer(w, r, plan, err)
		return
	}
	op, ok := s.runTool(w, r, func(ctx context.Context, c snapshots.Caller) (*snapshots.Operation, error) {
		return s.restores.Resets().Reset(ctx, c, restore.ResetRequest{Box: p.Box, KeepLogins: p.KeepLogins, Template: p.Template, RequestID: p.Request})
	})
	if !ok {
		return
	}
	res, err := s.restores.Kinds().Reset.Result(op)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	box := s.BoxName(r.Context(), caller(r), op)
	writeJSON(w, http.StatusOK, wire.ResetAnswer{Message: restore.ResetDoneWords(box, res), Operation: op.ID, Box: box,
		Undo: res.Undo, UndoName: res.UndoName, Kept: res.Kept, Skipped: res.Skipped})
}

// toolUndo is box_undo: the box goes back to its newest undo, of a reset or
// a restore, with the restore's rules.
func (s agentTools) toolUndo(w http.ResponseWriter, r *http.Request) {
	var p toolparams.UndoParams
	if err := decode(r, &p, "box, request and dry_run"); err != nil {
		s.fail(w, r, err)
		return
	}
	err := checkRef("box", p.Box)
	if err == nil {
		err = checkRequest(p.Request)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if p.DryRun {
		plan, err := s.plans.Undo(r.Context(), caller(r), p.Box, false)
		s.answer(w, r, plan, err)
		return
	}
	op, ok := s.runTool(w, r, func(ctx context.Context, c snapshots.Caller) (*snapshots.Operation, error) {
		return s.restores.Resets().UndoNewest(ctx, c, p.Box, p.Request, false)
	})
	if !ok {
		return
	}
	s.writeRestored(w, r, op)
}

// toolTrash is box_trash: the boxes of the agent's own thread in the trash.
func (s agentTools) toolTrash(w http.ResponseWriter, r *http.Request) {
	var p toolparams.TrashToolParams
	if err := decodeOptional(r, &p, "no parameters"); err != nil {
		s.fail(w, r, err)
		return
	}
	s.trash.listTrash(w, r)
}

// toolTrashRestore is box_trash_restore: a box of the agent's own thread
// back from the trash, with its history.
func (s agentTools) toolTrashRestore(w http.ResponseWriter, r *http.Request) {
	var p toolparams.BoxToolParams
	if err := decode(r, &p, "box and request"); err != nil {
		s.fail(w, r, err)
		return
	}
	err := checkRef("box", p.Box)
	if err == nil {
		err = checkRequest(p.Request)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	op, ok := s.runTool(w, r, func(ctx context.Context, c snapshots.Caller) (*snapshots.Operation, error) {
		return s.boxes.RestoreFromTrash(ctx, c, p.Box, p.Request)
	})
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, wire.OperationAnswer{Operation: op, Message: s.Describe(r.Context(), caller(r), op)})
}
