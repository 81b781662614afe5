package restore

import (
	"context"
	"fmt"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// LoggedBefore reports whether op already wrote an event of kind in its
// box's log, for a run resumed after a snooze or a restart.
func LoggedBefore(ctx context.Context, st *store.Store, op *snapshots.Operation, box, kind string) (bool, error) {
	logged, err := st.SnoozeOpLogged(ctx, st.Pool, db.SnoozeOpLoggedParams{BoxID: box, OperationID: op.ID, Kind: kind})
	if err != nil {
		return false, fmt.Errorf("read the box log of %s: %w", op.ID, err)
	}
	return logged, nil
}

// ProviderStep reports whether a restore step is the backend's own
// (RestoreSnapshot's: stop, rollback, start, read the size), which a task
// ended OK has done; the undo and the swap's steps find what they did.
func ProviderStep(step providers.RestoreStep) bool {
	switch step {
	case providers.StepUndo, providers.StepAccess, providers.StepAdopt, providers.StepEarlier:
		return false
	}
	return true
}
