package take

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// findHeld looks for a snapshot's label in the backend's listing.
func (s *Take) findHeld(ctx context.Context, be snapshots.Backend, id string) (providers.HeldSnapshot, bool, error) {
	held, err := be.Snap.HeldSnapshots(ctx)
	if err != nil {
		return providers.HeldSnapshot{}, false, err
	}
	for _, h := range held {
		if h.Label.Snapshot == id && h.Label.Install == s.install {
			return h, true, nil
		}
	}
	return providers.HeldSnapshot{}, false, nil
}

// recordPrice keeps on the record what the backend charges for holding the
// snapshot: null on the person's own storage.
func (s *Take) recordPrice(ctx context.Context, tx pgx.Tx, sn *snapshots.Snapshot, snapping *providers.Snapshotting) error {
	if snapping == nil || snapping.Price == nil {
		return nil
	}
	raw, err := json.Marshal(snapping.Price)
	if err != nil {
		return fmt.Errorf("record price of %s: %w", sn.ID, err)
	}
	if err := s.st.CoreSnapshotSetPrice(ctx, tx, db.CoreSnapshotSetPriceParams{ID: sn.ID, Price: raw}); err != nil {
		return fmt.Errorf("record price of %s: %w", sn.ID, err)
	}
	sn.Price = raw
	return nil
}
