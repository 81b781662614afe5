package snapshots

import (
	"context"
	"errors"
	"fmt"

	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/providers"
)

// RunningOn answers the operation of boxsnap's running on the box now, or
// nil: the box page shows its step in place of any lock its work holds.
func (s *Kernel) RunningOn(ctx context.Context, b *Box) (*Operation, error) {
	op, err := OperationRow(s.st.HeldOpRunningOnBox(ctx, s.st.Pool, b.ID))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s's operations: %w", b.Name, err)
	}
	return op, nil
}

// planNow reads the backend's plan for b the way every admission and the box
// page do: a lock is the host's to clear, and said with its command, only
// when it is seen on two reads with none of boxsnap's operations running on
// the box; while one runs, the lock is that work's own, so the plan answers
// without it (what is asked waits its turn, and the backend waits for the
// task holding the lock).
func (s *Kernel) PlanNow(ctx context.Context, b *Box, be Backend, ref *providers.SnapshotRef) (providers.SnapshotPlan, error) {
	plan, err := be.Snap.PlanSnapshots(ctx, GuestOf(b), ref)
	var locked *providers.LockedError
	for read := 1; errors.As(err, &locked); read++ {
		op, rerr := s.RunningOn(ctx, b)
		if rerr != nil {
			return plan, rerr
		}
		if op != nil {
			plan.Locked = nil // boxsnap's own work holds it
			return plan, nil
		}
		if read == 2 {
			return plan, err
		}
		plan, err = be.Snap.PlanSnapshots(ctx, GuestOf(b), ref)
	}
	return plan, err
}
