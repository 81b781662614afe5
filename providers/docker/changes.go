package docker

import (
	"context"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// ChangeCadence: a Docker box is checked every 15 seconds, as moatbox
// checks its spaces.
func (b *Backend) ChangeCadence() providers.Cadence {
	return providers.Cadence{Every: 15 * time.Second,
		Why: "Docker cannot tell whether a box's volume changed without reading it, so each check of a running box takes one"}
}

// Changes reads whether the container runs (one inspect) and answers
// ChangedUnknown: the engine has no cheap question for "did the container's
// layer or its volume change since the last commit" (`docker diff` walks
// the layer and never sees the volume), so the core takes an automatic
// snapshot at the cadence.
func (b *Backend) Changes(ctx context.Context, g providers.Guest) (providers.ChangeCheck, error) {
	c, ok, err := b.inspect(ctx, g.Ref)
	if err != nil || !ok {
		return providers.ChangeCheck{}, err
	}
	return providers.ChangeCheck{Exists: true, Running: running(c), Changed: providers.ChangedUnknown,
		Why: "Docker cannot tell without reading the box"}, nil
}
