package hosts

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// MayFetch is what a backend with a content store asks before it fetches
// a snapshot this host does not hold (local.Config.MayFetch): the
// database's record of the snapshot the backend knows by ref, so one
// deleted (no record) or being deleted is missing on every host at once,
// though its objects stay in the bucket until the sweep frees them. Such a
// snapshot answers an error wrapping providers.ErrNotFound, which the
// backend reads as a snapshot it does not have.
func MayFetch(st *store.Store, backend string) func(ctx context.Context, ref string) error {
	return func(ctx context.Context, ref string) error {
		state, err := st.SnapshotStateByRef(ctx, st.Pool, db.SnapshotStateByRefParams{BackendID: backend, Ref: ref})
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && state == snapshots.StateDeleting) {
			return fmt.Errorf("snapshot %s: %w", ref, providers.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read snapshot %s's record before fetching it: %w", ref, err)
		}
		return nil
	}
}
