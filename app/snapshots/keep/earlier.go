package keep

import (
	"context"
	"fmt"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// lastOnEarlier answers the box's earlier guest when sn, deleting, is the
// last snapshot that lives on it ("it is deleted when its last snapshot
// goes"), or nil.
func (s *Keeps) lastOnEarlier(ctx context.Context, sn *snapshots.Snapshot, b *snapshots.Box) (*providers.Guest, error) {
	if sn.Guest != "earlier" || sn.GuestRef == nil || b == nil {
		return nil, nil
	}
	n, err := s.st.HeldEarlierInUse(ctx, s.st.Pool, db.HeldEarlierInUseParams{BoxID: b.ID, GuestRef: *sn.GuestRef})
	if err != nil {
		return nil, fmt.Errorf("count the snapshots on %s's earlier guest: %w", b.Name, err)
	}
	if n > 0 {
		return nil, nil
	}
	g := snapshots.RefOf(sn, b).Guest
	return &g, nil
}
