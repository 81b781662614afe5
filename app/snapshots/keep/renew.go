package keep

import (
	"context"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// Renew is "Keep 30 more days": it adds the setting's days to a kept
// snapshot's keep date; a renewal never shortens it.
// A snapshot that is not kept is refused: Keep it first.
func (s *Keeps) Renew(ctx context.Context, c snapshots.Caller, req snapshots.KeepRequest) (*snapshots.Operation, error) {
	sn, b, err := s.k.SnapshotOfBox(ctx, c, req.Box, req.Snapshot)
	if err != nil {
		return nil, err
	}
	if err := snapshots.MayAct(c, snapshots.ActKeep, b, sn); err != nil {
		return nil, err
	}
	if !sn.Kept() {
		return nil, refusal(snapshots.CodeConflict, snapshots.RenewNotKeptWords(sn.Name))
	}
	settings, err := s.k.Settings(ctx)
	if err != nil {
		return nil, err
	}
	req.Days, req.Until = settings.KeepDays, nil
	return s.Keep(ctx, c, req)
}
