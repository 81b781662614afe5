package snapshots

import (
	"context"

	"github.com/boxsnap/boxsnap/providers"
)

// ReleaseGuest deletes a guest that is not the box's own (an earlier
// guest), its stop's and destroy's tasks left to the job's snooze where the
// backend can leave them (providers.TaskReleaser) and rec snoozes.
func (s *Kernel) ReleaseGuest(ctx context.Context, be Backend, g providers.Guest, rec providers.Recorder) error {
	if tr, ok := be.Boxes.(providers.TaskReleaser); ok {
		return tr.ReleaseRecorded(ctx, g, rec)
	}
	return be.Boxes.Release(ctx, g)
}
