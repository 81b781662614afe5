package snapshots

import (
	"context"
	"fmt"

	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// LastOnEarlier answers the box's earlier guest when sn, deleting, is the
// last snapshot that lives on it ("it is deleted when its last snapshot
// goes"), or nil.
func (s *Service) LastOnEarlier(ctx context.Context, sn *Snapshot, b *Box) (*providers.Guest, error) {
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
	g := RefOf(sn, b).Guest
	return &g, nil
}

// ReleaseGuest deletes a guest that is not the box's own (an earlier
// guest), its stop's and destroy's tasks left to the job's snooze where the
// backend can leave them (providers.TaskReleaser) and rec snoozes.
func (s *Kernel) ReleaseGuest(ctx context.Context, be Backend, g providers.Guest, rec providers.Recorder) error {
	if tr, ok := be.Boxes.(providers.TaskReleaser); ok {
		return tr.ReleaseRecorded(ctx, g, rec)
	}
	return be.Boxes.Release(ctx, g)
}
