package sweeps

import (
	"context"
	"fmt"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// EmptyDueTrash admits the release of every box whose time in the trash has
// ended; the periodic trash sweep calls it. A box whose release cannot be
// admitted now (an operation cut short) is tried again at the next sweep.
func (s *Sweeps) EmptyDueTrash(ctx context.Context) ([]*snapshots.Operation, error) {
	ids, err := s.st.TrashDue(ctx, s.st.Pool, s.now())
	if err != nil {
		return nil, fmt.Errorf("trash sweep: %w", err)
	}
	var ops []*snapshots.Operation
	for _, id := range ids {
		op, err := s.boxes.EmptyTrash(ctx, snapshots.System(whyTrashEnded), id, "")
		if err != nil {
			if _, ok := snapshots.AsRefusal(err); ok {
				s.logger.Info("the trash sweep left a box for later", "box", id, "why", err)
				continue
			}
			return ops, err
		}
		ops = append(ops, op)
	}
	return ops, nil
}
