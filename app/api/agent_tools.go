package api

import (
	"context"
	"net/http"

	"github.com/boxsnap/boxsnap/app/api/toolparams"
	"github.com/boxsnap/boxsnap/app/pictures"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/app/snapshots/heads"
	"github.com/boxsnap/boxsnap/app/snapshots/keep"
	"github.com/boxsnap/boxsnap/app/snapshots/plans"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/app/wire"
	"github.com/boxsnap/boxsnap/providers"
)

// agentTools are the agent tools' own handlers, the table's (tools.go).
// They hold the core, the seams the tools call, the plans of their dry
// runs, the snapshots' pictures, the fork into many, the trash's listing,
// and toolOperations and toolLookups, nothing else of the server (not the
// token check, the approvals or the hosts).
type agentTools struct {
	failer
	toolOperations
	toolLookups
	core     *snapshots.Service
	boxes    *boxes.Boxes
	take     *take.Take
	keeps    *keep.Keeps
	restores *restore.Restores
	forks    *fork.Forks
	plans    *plans.Plans
	pictures *pictures.Pictures
	many     forkMany
	trash    boxRoutes
}

// toolOperations is what the tools ask of the operations: start one and
// wait for it, answer how it ended, and box_fork's snapshot of the box
// now, deleted again when the fork is refused.
type toolOperations interface {
	waitOp(ctx context.Context, c snapshots.Caller, id string) (*snapshots.Operation, error)
	runTool(w http.ResponseWriter, r *http.Request, start func(context.Context, snapshots.Caller) (*snapshots.Operation, error)) (*snapshots.Operation, bool)
	endedBadly(w http.ResponseWriter, r *http.Request, op *snapshots.Operation) bool
	describe(ctx context.Context, c snapshots.Caller, op *snapshots.Operation) string
	forkCapture(w http.ResponseWriter, r *http.Request, p toolparams.ForkToolParams) (tookForFork, bool)
	undoForkTake(ctx context.Context, c snapshots.Caller, id, name string, refused error) error
}

// toolLookups is what the tools ask of the shared reads, which the routes
// answer alike, and of the words of a snapshot and a box.
type toolLookups interface {
	boxName(ctx context.Context, c snapshots.Caller, op *snapshots.Operation) string
	priceOf(ctx context.Context, c snapshots.Caller, id string) *providers.Price
	snapshotPrice(sn *snapshots.Snapshot, b *snapshots.Box) *providers.Price
	restoreWords(ctx context.Context, c snapshots.Caller, box string, res restore.RestoreResult) string
	byWords(ctx context.Context, sn *snapshots.Snapshot) string
	boxHoldsWords(b *snapshots.Box, n int) string
	boxesOf(ctx context.Context, c snapshots.Caller) (boxesAnswer, error)
	folderOf(ctx context.Context, c snapshots.Caller, box, ref, path string) (wire.FilesAnswer, error)
	fileOf(ctx context.Context, c snapshots.Caller, box, ref, path string) (wire.FileAnswer, error)
	compare(r *http.Request, box, ref, against, path string, offset, limit int) (*wire.DiffAnswer, error)
	lineageOf(ctx context.Context, c snapshots.Caller, box, ref string) (heads.Lineage, error)
}

// tool is a handler of agentTools as the table holds it, run on the server
// the call came to.
func tool(h func(agentTools, http.ResponseWriter, *http.Request)) func(*server, http.ResponseWriter, *http.Request) {
	return func(s *server, w http.ResponseWriter, r *http.Request) { h(newAgentTools(s), w, r) }
}
