package boxes

import (
	"context"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// recordRun keeps how a new box runs (snapshots.BoxRun), so a move onto
// another host makes it running as it was made here. A failure is logged
// without the run, whose environment may hold secrets.
func (s *Boxes) recordRun(ctx context.Context, boxID string, spec providers.BoxSpec) {
	run, err := snapshots.MarshalRun(snapshots.RunOf(spec))
	if err == nil {
		err = s.st.BoxRunSet(ctx, s.st.Pool, db.BoxRunSetParams{BoxID: boxID, Run: run})
	}
	if err != nil {
		s.logger.Warn("record how a box runs", "box", boxID, "err", err)
	}
}
