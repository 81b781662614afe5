package snapshots

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/providers"
)

// Reserved is the room an operation holds on a storage until it ends ("Room
// and money are reserved, for every box at once, in one transaction, so two
// takes cannot both use the last of a host's room").
type Reserved struct {
	Storage string `json:"storage"`
	Bytes   int64  `json:"bytes"`
}

// storageKey names a storage across backends and hosts.
func storageKey(b *Box, plan providers.SnapshotPlan) string {
	return fmt.Sprintf("%s/%s/%s", b.BackendID, b.Host, plan.Storage.Name)
}

// ReserveRoom checks the room rule again inside the admission's transaction,
// counting what operations running or unconfirmed on the same storage have
// reserved (an unconfirmed one may have written its snapshot), under
// a transaction lock on that storage, and returns the reservation to record
// on the operation. adds is what this operation expects to write.
func (s *Service) ReserveRoom(ctx context.Context, tx pgx.Tx, c Caller, b *Box, be Backend, plan providers.SnapshotPlan, st Settings, adds *int64) (*Reserved, error) {
	r := reservation(b, plan, adds)
	if err := s.roomReserved(ctx, tx, c, b, be, plan, st, r.Storage, r.Bytes); err != nil {
		return nil, err
	}
	return r, nil
}

// reservation is what an operation that expects to write adds reserves on
// the box's storage.
func reservation(b *Box, plan providers.SnapshotPlan, adds *int64) *Reserved {
	r := &Reserved{Storage: storageKey(b, plan)}
	if adds != nil {
		r.Bytes = *adds
	}
	return r
}

// roomReserved applies the room rule to what operations running or
// unconfirmed have reserved on the storage key, plus extra, under a
// transaction lock on that storage taken here and held to the commit. An
// admission that has already recorded its operation with its reservation
// passes no extra: the read counts its own.
func (s *Service) roomReserved(ctx context.Context, tx pgx.Tx, c Caller, b *Box, be Backend, plan providers.SnapshotPlan, st Settings, key string, extra int64) error {
	if err := s.st.CoreStorageLock(ctx, tx, key); err != nil {
		return fmt.Errorf("lock storage %s: %w", key, err)
	}
	held, err := s.st.CoreReservedOn(ctx, tx, key)
	if err != nil {
		return fmt.Errorf("read reservations on %s: %w", key, err)
	}
	total := held + extra
	return s.RoomFor(ctx, c, b, be, plan, st, &total)
}
