package restore

import (
	"context"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// RestoreDry is what a dry run of a restore answers: what the restore would
// change and the plan's words. A dry run changes nothing: no operation, no
// job, no undo, no pin.
type RestoreDry struct {
	Box      *snapshots.Box
	Snapshot *snapshots.Snapshot
	// Changes is what differs between the snapshot and the box now (first
	// page), nil where the backend cannot tell.
	Changes *snapshots.Comparison
	// Undo is set when the restore would take an undo first.
	Undo bool
	// RestartsProcesses says every process in the box ends.
	RestartsProcesses bool
}

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
	out := &RestoreDry{Box: b, Snapshot: sn, Undo: !req.NoUndo, RestartsProcesses: plan.Restore.RestartsProcesses}
	if s.preview == nil {
		return out, nil
	}
	if out.Changes, err = s.preview.RestorePreview(ctx, c, sn.ID); err != nil {
		return nil, err
	}
	return out, nil
}

// RestorePreviewer says what a restore to a snapshot would change (the
// Contents seam's RestorePreview): a dry run's Changes.
type RestorePreviewer interface {
	RestorePreview(ctx context.Context, c snapshots.Caller, id string) (*snapshots.Comparison, error)
}

// UseRestorePreview gives the restore what its dry run asks for its
// changes; without one a dry run's Changes is nil, as where the backend
// cannot tell.
func (s *Restores) UseRestorePreview(p RestorePreviewer) { s.preview = p }

// restoreEligibleNow is the check a restore's admission makes in its
// transaction, read without locking: the box is ready, nothing is unsettled
// on it, and the snapshot may be restored now.
func (s *Restores) restoreEligibleNow(ctx context.Context, b *snapshots.Box, sn *snapshots.Snapshot, ref string) error {
	b2, err := s.k.BoxByID(ctx, s.st.Pool, b.ID)
	if err != nil {
		return snapshots.BoxNotFound(b.Name)
	}
	b = b2
	sn2, err := s.k.SnapshotByID(ctx, s.st.Pool, sn.ID)
	if err != nil {
		return snapshots.SnapshotNotFound(ref)
	}
	sn = sn2
	pins, err := s.k.DeletingPins(ctx, s.st.Pool, sn.ID, "")
	if err != nil {
		return err
	}
	if err := snapshots.Eligible(sn, snapshots.ChangeRestore, pins, s.now(), s.k.TimeZone(ctx)); err != nil {
		return err
	}
	if b.State != snapshots.BoxReady {
		return refusal(snapshots.CodeBusy, beingReleasedWords(b.Name))
	}
	return s.k.Unsettled(ctx, s.st.Pool, b)
}
