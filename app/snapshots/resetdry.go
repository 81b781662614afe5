package snapshots

import (
	"context"
)

// ResetCheck checks a reset as Reset does (who may, the setting, the
// template, the plan, the room and the price of its undo, the guard, the
// box's state) and admits nothing: a reset's dry run (package plans) asks
// it before it says the plan.
func (s *Service) ResetCheck(ctx context.Context, c Caller, req ResetRequest) error {
	req.dryRun, req.RequestID = true, ""
	_, err := s.Reset(ctx, c, req)
	return err
}

// resetEligibleNow is the check a reset's admission makes in its
// transaction, read without locking: the box is ready, nothing is unsettled
// on it, and its undo is within the ceiling.
func resetEligibleNow(ctx context.Context, s *Service, c Caller, b *Box, be Backend, settings Settings) error {
	b2, err := s.BoxByID(ctx, s.st.Pool, b.ID)
	if err != nil {
		return boxNotFound(b.Name)
	}
	b = b2
	if b.State != BoxReady {
		return refusal(CodeBusy, boxIsWords(b.Name, b.State))
	}
	if err := s.Unsettled(ctx, s.st.Pool, b); err != nil {
		return err
	}
	if err := s.ceilingAdmits(ctx, s.st.Pool, c, b.BackendID, chargeOfPlan(be.Snap.Snapshotting(b.Kind)), settings); err != nil {
		return undoPriceWords(Agent(""), err)
	}
	return nil
}
