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
	p, ok := openTool(s.failer, w, r, "box, keep_logins, template, request and dry_run", func(p *toolparams.ResetToolParams) toolOpening {
		refs := checkRef("box", p.Box)
		if refs == nil && p.Template != "" {
			refs = checkRef("template", p.Template)
		}
		return toolOpening{refs: refs, request: p.Request, dryRun: p.DryRun, plan: func(ctx context.Context, c snapshots.Caller) (any, error) {
			return s.plans.Reset(ctx, c, restore.ResetRequest{Box: p.Box, KeepLogins: p.KeepLogins, Template: p.Template})
		}}
	})
	if !ok {
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
	p, ok := openTool(s.failer, w, r, "box, request and dry_run", func(p *toolparams.UndoParams) toolOpening {
		return toolOpening{refs: checkRef("box", p.Box), request: p.Request, dryRun: p.DryRun,
			plan: func(ctx context.Context, c snapshots.Caller) (any, error) { return s.plans.Undo(ctx, c, p.Box, false) }}
	})
	if !ok {
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
	p, ok := openTool(s.failer, w, r, "box and request", func(p *toolparams.BoxToolParams) toolOpening {
		return toolOpening{refs: checkRef("box", p.Box), request: p.Request}
	})
	if !ok {
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
