package restore

import (
	"context"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// RestoreDryRun checks a restore as Restore does (who may, the guard, the
// plan, the room for the undo, the snapshot's eligibility now) and says what
// it would change, admitting nothing.
func (s *Restores) RestoreDryRun(ctx context.Context, c snapshots.Caller, req snapshots.RestoreRequest) (*RestoreDry, error) {
	req.DryRun = true
	if c.Kind == snapshots.CallerAgent {
		req.Replace = true // a dry run replaces nothing
	}
	if _, err := s.Restore(ctx, c, req); err != nil {
		return nil, err
	}
	b, sn, plan, err := s.k.Plan(ctx, c, req.Box, req.Snapshot)
	if err != nil {
		return nil, err
	}
	out := &RestoreDry{Box: b, Snapshot: sn, Undo: !req.NoUndo, UndoOnceStopped: UndoOnceStopped(plan), RestartsProcesses: plan.Restore.RestartsProcesses}
	if s.preview == nil {
		return out, nil
	}
	if out.Changes, err = s.preview.RestorePreview(ctx, c, sn.ID); err != nil {
		return nil, err
	}
	return out, nil
}

// UseRestorePreview gives the restore what its dry run asks for its
// changes; without one a dry run's Changes is nil, as where the backend
// cannot tell.
func (s *Restores) UseRestorePreview(p RestorePreviewer) { s.preview = p }
