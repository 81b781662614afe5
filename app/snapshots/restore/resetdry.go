package restore

import (
	"context"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// ResetCheck checks a reset as Reset does (who may, the setting, the
// template, the plan, the room and the price of its undo, the guard, the
// box's state) and admits nothing: a reset's dry run (package plans) asks
// it before it says the plan.
func (s *Resets) ResetCheck(ctx context.Context, c snapshots.Caller, req ResetRequest) error {
	req.dryRun, req.RequestID = true, ""
	_, err := s.Reset(ctx, c, req)
	return err
}

// resetEligibleNow is the check a reset's admission makes in its
// transaction, read without locking: the box is ready, nothing is unsettled
// on it, and its undo is within the ceiling.
func resetEligibleNow(ctx context.Context, s *Resets, c snapshots.Caller, b *snapshots.Box, be snapshots.Backend, settings snapshots.Settings) error {
	b2, err := s.k.BoxByID(ctx, s.st.Pool, b.ID)
	if err != nil {
		return snapshots.BoxNotFound(b.Name)
	}
	b = b2
	if b.State != snapshots.BoxReady {
		return refusal(snapshots.CodeBusy, boxIsWords(b.Name, b.State))
	}
	if err := s.k.Unsettled(ctx, s.st.Pool, b); err != nil {
		return err
	}
	if err := s.k.CeilingAdmits(ctx, s.st.Pool, c, b.BackendID, snapshots.ChargeOfPlan(be.Snap.Snapshotting(b.Kind)), settings); err != nil {
		return undoPriceWords(snapshots.Agent(""), err)
	}
	return nil
}
