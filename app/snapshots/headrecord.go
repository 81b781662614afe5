package snapshots

import (
	"context"

	"github.com/boxsnap/boxsnap/app/store/db"
)

// A box's head record stays in the kernel: a take, a restore, a fork, a
// reset and an import all move it, and app/snapshots/heads reads it and
// lets someone choose it.

// MaxLineage bounds how far a lineage is followed.
const MaxLineage = 200

// SetHead puts a box's head on a snapshot: a restore's target, or the
// snapshot a fork made the box from.
func (s *Service) SetHead(ctx context.Context, q db.DBTX, box, snapshot string) {
	if err := s.st.LookHeadSet(ctx, q, db.LookHeadSetParams{ID: box, HeadID: &snapshot}); err != nil {
		s.logger.Error("set the box's head", "box", box, "snapshot", snapshot, "err", err)
	}
}
