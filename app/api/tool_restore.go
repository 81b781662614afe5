package api

import (
	"context"
	"net/http"

	"github.com/boxsnap/boxsnap/app/api/toolparams"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/wire"
)

const restoreTakes = "box, snapshot, replace (true), request and dry_run"

// toolRestore is box_restore: an undo is always taken; replace must be
// true; a repeated request is the same restore.
func (s agentTools) toolRestore(w http.ResponseWriter, r *http.Request) {
	p, ok := openTool(s.failer, w, r, restoreTakes, func(p *toolparams.RestoreParams) toolOpening {
		return toolOpening{refs: checkBoxAndSnapshot(p.Box, p.Snapshot), request: p.Request, dryRun: p.DryRun,
			plan: func(ctx context.Context, c snapshots.Caller) (any, error) {
				return s.plans.Restore(ctx, c, snapshots.RestoreRequest{Box: p.Box, Snapshot: p.Snapshot, Replace: true})
			}}
	})
	if !ok {
		return
	}
	if p.Replace == nil || !*p.Replace {
		s.fail(w, r, invalid("%s", snapshots.ReplaceTrueWords(p.Box)))
		return
	}
	op, ok := s.runTool(w, r, func(ctx context.Context, c snapshots.Caller) (*snapshots.Operation, error) {
		return s.restores.Restore(ctx, c, snapshots.RestoreRequest{Box: p.Box, Snapshot: p.Snapshot, Replace: true, RequestID: p.Request})
	})
	if !ok {
		return
	}
	s.writeRestored(w, r, op)
}

// writeRestored answers a tool whose restore ended done (box_restore,
// box_undo) with what it did.
func (s agentTools) writeRestored(w http.ResponseWriter, r *http.Request, op *snapshots.Operation) {
	c := caller(r)
	res, err := s.restores.Kinds().Restore.Result(op)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	box := s.BoxName(r.Context(), c, op)
	writeJSON(w, http.StatusOK, wire.RestoreAnswer{
		Message: s.RestoreWords(r.Context(), c, box, res), Operation: op.ID, Box: box, Snapshot: res.Target, Name: res.TargetName,
		Undo: res.Undo, UndoName: res.UndoName, ProcessesEnded: res.Processes, Size: res.Size, BoxState: res.BoxState,
		ReplacedUndos: res.Replaced,
	})
}
