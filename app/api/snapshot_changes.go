package api

import (
	"context"
	"net/http"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/app/snapshots/keep"
	"github.com/boxsnap/boxsnap/app/snapshots/plans"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/app/wire"
)

// snapshotChanges are the handlers that take a snapshot or act on one: its
// restore, fork, delete, name, note, keep, save and renewal. They hold the
// core, the seams that do those (take, keeps, restores, forks), the plans
// of their dry runs, the fork into many and changeOperations, nothing else
// of the server.
type snapshotChanges struct {
	failer
	changeOperations
	core     *snapshots.Service
	take     *take.Take
	keeps    *keep.Keeps
	restores *restore.Restores
	forks    *fork.Forks
	plans    *plans.Plans
	many     forkMany
}

// changeOperations is what snapshotChanges ask of the operations and the
// shared reads: an operation's answer, and a snapshot as the listing
// shows it.
type changeOperations interface {
	answerOperation(w http.ResponseWriter, r *http.Request, op *snapshots.Operation, wait bool)
	full(ctx context.Context, sn *snapshots.Snapshot, tz *time.Location) wire.ListedFull
}
