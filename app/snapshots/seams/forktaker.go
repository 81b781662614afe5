package seams

import (
	"context"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
)

// forkTaker is the take a fork of the box now starts from, for package
// fork, which never imports another seam.
type forkTaker struct{ t *take.Take }

// TakeForFork admits the take of box named name under requestID.
func (f forkTaker) TakeForFork(ctx context.Context, c snapshots.Caller, box, name, requestID string) (*snapshots.Operation, error) {
	op, _, err := f.t.Take(ctx, c, take.TakeRequest{Box: box, Name: name, RequestID: requestID})
	return op, err
}
