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
