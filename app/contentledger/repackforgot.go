package contentledger

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
)

// dropForgotten deletes from the bucket the new pack key whose move could
// not be recorded because its record is gone: its claim ran out while
// the repack read and put (a bucket that stopped answering for longer
// than the grace), and a sweep forgot it as a pack nothing lies in. No
// object can lie in a pack with no record (the objects' pack is a foreign
// key), and no sweep would find it again, so it is deleted here or never.
// Any other failure of the move leaves the pack to the sweep, as a claim.
func (l *Ledger) dropForgotten(ctx context.Context, r Repacker, key string, moved error) error {
	var pe *pgconn.PgError
	if !errors.As(moved, &pe) || pe.Code != "23503" || pe.ConstraintName != "content_objects_pack_fkey" {
		return moved
	}
	if err := r.Delete(context.WithoutCancel(ctx), key); err != nil {
		return errors.Join(moved, err)
	}
	return moved
}
