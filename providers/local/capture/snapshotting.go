package capture

import (
	"context"
	"fmt"

	"github.com/boxsnap/boxsnap/providers"
)

// Snapshotting is the same for every kind: a folder snapshots the same way
// whatever runs in it.
func (b *Capturer) Snapshotting(kind string) *providers.Snapshotting {
	fork := providers.ForkCopy
	if b.ForksShare != nil && b.ForksShare() {
		fork = providers.ForkShared
	}
	return &providers.Snapshotting{
		Scope:            providers.ScopeBox,
		Holds:            []providers.Holds{providers.HoldsDisk},
		WhileRunning:     providers.WhileRunningPauses,
		Restore:          providers.RestoreInPlace,
		Fork:             fork,
		KeepsPastRelease: providers.KeepsAsIs,
		Lives:            providers.LivesHost,
		Price:            b.Price,
		Excludes:         Excludes,
	}
}

// ProviderTask: the local backend runs no provider tasks; every operation
// finishes inside its call.
func (b *Capturer) ProviderTask(ctx context.Context, task providers.TaskRef) (providers.TaskOutcome, error) {
	return providers.TaskOutcome{}, fmt.Errorf("local backend task %s: %w", task.ID, providers.ErrUnsupported)
}
