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
	p, ok := openTool(s.failer, w, r, "box, request and dry_run", func(p *toolparams.ReleaseParams) toolOpening {
		return toolOpening{refs: checkRef("box", p.Box), request: p.Request, dryRun: p.DryRun,
			plan: func(ctx context.Context, c snapshots.Caller) (any, error) {
				return s.plans.Release(ctx, c, p.Box, false)
			}}
	})
	if !ok {
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
