package api

import (
	"context"
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
)

// snapshotMoves are the handlers that move snapshots between boxsnaps:
// export, import, and share codes made, listed, revoked, redeemed and
// copied. They hold the contents seam, which moves them, and the waits
// and answers of an import's operation, nothing else of the server.
type snapshotMoves struct {
	failer
	moveOperations
	contents *contents.Contents
}

// moveOperations is what snapshotMoves ask of the operations: an
// import's wait and answer.
type moveOperations interface {
	waitOp(ctx context.Context, c snapshots.Caller, id string) (*snapshots.Operation, error)
	answerOperation(w http.ResponseWriter, r *http.Request, op *snapshots.Operation, wait bool)
}
