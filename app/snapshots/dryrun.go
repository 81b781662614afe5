package snapshots

import (
	"context"
)

// RestoreDry is what a dry run of a restore answers: what the restore would
// change and the plan's words. A dry run changes nothing: no operation, no
// job, no undo, no pin.
type RestoreDry struct {
	Box      *Box
	Snapshot *Snapshot
	// Changes is what differs between the snapshot and the box now (first
	// page), nil where the backend cannot tell.
	Changes *Comparison
	// Undo is set when the restore would take an undo first.
	Undo bool
	// RestartsProcesses says every process in the box ends.
	RestartsProcesses bool
}

// RestoreDryRun checks a restore as Restore does (who may, the guard, the
// plan, the room for the undo, the snapshot's eligibility now) and says what
// it would change, admitting nothing.
func (s *Service) RestoreDryRun(ctx context.Context, c Caller, req RestoreRequest) (*RestoreDry, error) {
	req.dryRun = true
	if c.Kind == CallerAgent {
		req.Replace = true // a dry run replaces nothing
	}
	if _, err := s.Restore(ctx, c, req); err != nil {
		return nil, err
	}
	b, sn, plan, err := s.Plan(ctx, c, req.Box, req.Snapshot)
	if err != nil {
		return nil, err
	}
	out := &RestoreDry{Box: b, Snapshot: sn, Undo: !req.NoUndo, RestartsProcesses: plan.Restore.RestartsProcesses}
	if out.Changes, err = s.contents.RestorePreview(ctx, c, sn.ID); err != nil {
		return nil, err
	}
	return out, nil
}

// restoreEligibleNow is the check a restore's admission makes in its
// transaction, read without locking: the box is ready, nothing is unsettled
// on it, and the snapshot may be restored now.
func (s *Service) restoreEligibleNow(ctx context.Context, b *Box, sn *Snapshot, ref string) error {
	b2, err := s.BoxByID(ctx, s.st.Pool, b.ID)
	if err != nil {
		return boxNotFound(b.Name)
	}
	b = b2
	sn2, err := s.SnapshotByID(ctx, s.st.Pool, sn.ID)
	if err != nil {
		return SnapshotNotFound(ref)
	}
	sn = sn2
	pins, err := s.deletingPins(ctx, s.st.Pool, sn.ID, "")
	if err != nil {
		return err
	}
	if err := Eligible(sn, ChangeRestore, pins, s.now(), s.TimeZone(ctx)); err != nil {
		return err
	}
	if b.State != BoxReady {
		return refusal(CodeBusy, wordsBeingReleased(b.Name))
	}
	return s.unsettled(ctx, s.st.Pool, b)
}
