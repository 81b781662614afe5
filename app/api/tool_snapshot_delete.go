package api

import (
	"context"
	"net/http"

	"github.com/boxsnap/boxsnap/app/api/answers"
	"github.com/boxsnap/boxsnap/app/api/toolparams"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/wire"
)

const deleteTakes = "box and snapshot, and optionally request and dry_run"

// toolSnapshotDelete is box_snapshot_delete: it deletes one the thread may
// delete, waits, and says what it freed.
func (s agentTools) toolSnapshotDelete(w http.ResponseWriter, r *http.Request) {
	p, ok := openTool(s.failer, w, r, deleteTakes, func(p *toolparams.DeleteParams) toolOpening {
		return toolOpening{refs: checkBoxAndSnapshot(p.Box, p.Snapshot), request: p.Request, dryRun: p.DryRun,
			plan: func(ctx context.Context, c snapshots.Caller) (any, error) {
				return s.plans.Delete(ctx, c, snapshots.DeleteRequest{Box: p.Box, Snapshot: p.Snapshot})
			}}
	})
	if !ok {
		return
	}
	op, ok := s.runTool(w, r, func(ctx context.Context, c snapshots.Caller) (*snapshots.Operation, error) {
		return s.keeps.Delete(ctx, c, snapshots.DeleteRequest{Box: p.Box, Snapshot: p.Snapshot, RequestID: p.Request})
	})
	if !ok {
		return
	}
	c := caller(r)
	res, err := s.keeps.Kinds().Delete.Result(op)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	box := s.BoxName(r.Context(), c, op)
	own := "own"
	writeJSON(w, http.StatusOK, wire.DeleteAnswer{Message: answers.DeleteWords(box, res), Operation: op.ID, Snapshot: res.Snapshot, Name: res.Name,
		FreedBytes: res.Freed, Freed: snapshots.SizeOfWords(res.Freed, &own)})
}
