package api

import (
	"context"
	"net/http"

	"github.com/boxsnap/boxsnap/app/api/toolparams"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/wire"
)

// toolRelease is box_release: a box of the agent's own thread released as
// POST /boxes/{box}/release releases it (the core's ReleaseBox, so the
// trash first while Settings keeps one), waited for; with dry_run, the
// release's plan, changing nothing.
func (s agentTools) toolRelease(w http.ResponseWriter, r *http.Request) {
	var p toolparams.ReleaseParams
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
		plan, err := s.plans.Release(r.Context(), caller(r), p.Box, false)
		s.answer(w, r, plan, err)
		return
	}
	op, ok := s.runTool(w, r, func(ctx context.Context, c snapshots.Caller) (*snapshots.Operation, error) {
		return s.boxes.ReleaseBox(ctx, c, p.Box, p.Request)
	})
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, wire.OperationAnswer{Operation: op, Message: s.Describe(r.Context(), caller(r), op)})
}
