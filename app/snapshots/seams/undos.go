package seams

import (
	"context"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
)

// undoKernel is the kernel as the boxes and the restores see it, with the
// take's undo: the undo a restore or a reset takes first and a release's
// final snapshot are the take seam's (take.Take.TakeUndo), which neither
// package imports.
type undoKernel struct {
	*snapshots.Service
	take *take.Take
}

// TakeUndo takes op's undo of b, or finds the one a restart cut short.
func (k undoKernel) TakeUndo(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, be snapshots.Backend, resuming bool) (*snapshots.Snapshot, error) {
	return k.take.TakeUndo(ctx, op, b, be, resuming)
}

// RecordUndo records op's undo of b before it is taken, or reads it.
func (k undoKernel) RecordUndo(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, be snapshots.Backend) (*snapshots.Snapshot, error) {
	return k.take.RecordUndo(ctx, op, b, be)
}
