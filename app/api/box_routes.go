package api

import (
	"context"
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
	"github.com/boxsnap/boxsnap/app/snapshots/heads"
	"github.com/boxsnap/boxsnap/app/snapshots/keep"
	"github.com/boxsnap/boxsnap/app/snapshots/plans"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
)

// boxRoutes are the handlers of the boxes and the trash: a box listed,
// made, read, released, reset and undone, its history, presence, log and
// lineage, and the boxes in the trash restored or emptied. They hold the
// seams those reach (boxes, keeps for a history's delete, restores for a
// reset and an undo, plans for their dry runs) and boxOperations, nothing
// else of the server.
type boxRoutes struct {
	failer
	boxOperations
	core     *snapshots.Service
	boxes    *boxes.Boxes
	keeps    *keep.Keeps
	restores *restore.Restores
	plans    *plans.Plans
}

// boxOperations is what boxRoutes ask of the operations and the shared
// reads: an operation's answer, the boxes the caller may see, a box's
// lineage.
type boxOperations interface {
	answerOperation(w http.ResponseWriter, r *http.Request, op *snapshots.Operation, wait bool)
	boxesOf(ctx context.Context, c snapshots.Caller) (boxesAnswer, error)
	lineageOf(ctx context.Context, c snapshots.Caller, box, ref string) (heads.Lineage, error)
}
