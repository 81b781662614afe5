package api

import (
	"context"
	"errors"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/plans"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
)

// dryRuns is what the handlers ask of the dry runs: package plans' Plans,
// or noDryRuns where the options could not make them.
type dryRuns interface {
	Delete(ctx context.Context, c snapshots.Caller, req snapshots.DeleteRequest) (*plans.DeleteDry, error)
	Restore(ctx context.Context, c snapshots.Caller, req snapshots.RestoreRequest) (*plans.RestoreDry, error)
	Undo(ctx context.Context, c snapshots.Caller, boxRef string, force bool) (*plans.RestoreDry, error)
	Reset(ctx context.Context, c snapshots.Caller, req restore.ResetRequest) (*plans.ResetDry, error)
	Release(ctx context.Context, c snapshots.Caller, ref string, deleteKept bool) (*plans.ReleaseDry, error)
	EmptyTrash(ctx context.Context, c snapshots.Caller, ref string) (*plans.ReleaseDry, error)
}

// errNoDryRuns answers every dry run of an API built without Core or
// Restores: an internal error, logged, rather than a nil dereference, so
// that options missing a seam show in the log at the first dry run.
var errNoDryRuns = errors.New("api: built without Core or Restores, so it answers no dry runs")

// noDryRuns is the dry runs of an API whose options lack Core or
// Restores: each refuses with errNoDryRuns.
type noDryRuns struct{}

func (noDryRuns) Delete(context.Context, snapshots.Caller, snapshots.DeleteRequest) (*plans.DeleteDry, error) {
	return nil, errNoDryRuns
}

func (noDryRuns) Restore(context.Context, snapshots.Caller, snapshots.RestoreRequest) (*plans.RestoreDry, error) {
	return nil, errNoDryRuns
}

func (noDryRuns) Undo(context.Context, snapshots.Caller, string, bool) (*plans.RestoreDry, error) {
	return nil, errNoDryRuns
}

func (noDryRuns) Reset(context.Context, snapshots.Caller, restore.ResetRequest) (*plans.ResetDry, error) {
	return nil, errNoDryRuns
}

func (noDryRuns) Release(context.Context, snapshots.Caller, string, bool) (*plans.ReleaseDry, error) {
	return nil, errNoDryRuns
}

func (noDryRuns) EmptyTrash(context.Context, snapshots.Caller, string) (*plans.ReleaseDry, error) {
	return nil, errNoDryRuns
}
