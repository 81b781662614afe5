package snapshots

import (
	"context"
)

// Renew is "Keep 30 more days": it adds the setting's days to a kept
// snapshot's keep date; a renewal never shortens it.
// A snapshot that is not kept is refused: Keep it first.
func (s *Service) Renew(ctx context.Context, c Caller, req KeepRequest) (*Operation, error) {
	sn, b, err := s.SnapshotOfBox(ctx, c, req.Box, req.Snapshot)
	if err != nil {
		return nil, err
	}
	if err := MayAct(c, ActKeep, b, sn); err != nil {
		return nil, err
	}
	if !sn.Kept() {
		return nil, refusal(CodeConflict, RenewNotKeptWords(sn.Name))
	}
	settings, err := s.Settings(ctx)
	if err != nil {
		return nil, err
	}
	req.Days, req.Until = settings.KeepDays, nil
	return s.Keep(ctx, c, req)
}
