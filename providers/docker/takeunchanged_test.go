package docker_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/docker"
	"github.com/boxsnap/boxsnap/providers/providertest"
)

// TestDockerUnchangedTakeDoesNotPause: a take of a box that changed
// nothing since its last take (whose record is settled) never pauses the
// box and says it paused it for no time; the snapshot still restores the
// box as it was, alone, after the takes before it are deleted; a take after
// a change pauses the box again and holds the change.
func TestDockerUnchangedTakeDoesNotPause(t *testing.T) {
	t.Parallel()
	var pauses atomic.Int64
	b := newBackend(t, func(c *docker.Config) {
		c.Hook = func(p string) {
			if p == "take:paused" {
				pauses.Add(1)
			}
		}
	})
	box := providertest.NewID("bx")
	g := newGuest(t, b, box)
	writeState(t, b, g, "v1")
	first := take(t, b, g, box)
	// The first take may have read a path in the tick it was written in;
	// the second's record was read long after every write.
	second := take(t, b, g, box)
	before := pauses.Load()
	id := providertest.NewID("sn")
	ctx := context.Background()
	taken, err := b.Snapshot(ctx, g, providers.SnapshotTake{Label: providers.Label{Install: install, Box: box, Snapshot: id}}, nil)
	must(t, err)
	if n := pauses.Load() - before; n != 0 || taken.Paused != 0 {
		t.Errorf("a take of a box unchanged since its last take paused it %d times, for %s: want no pause", n, taken.Paused)
	}
	unchanged := providers.SnapshotRef{ID: id, Ref: taken.Ref, Guest: g, Storage: taken.Storage}

	writeState(t, b, g, "v2")
	before = pauses.Load()
	take(t, b, g, box)
	if pauses.Load() == before {
		t.Errorf("a take of a box changed since its last take did not pause it")
	}
	must(t, b.DeleteSnapshot(ctx, first, nil))
	must(t, b.DeleteSnapshot(ctx, second, nil))
	restore(t, b, g, box, unchanged)
	if got := readState(t, b, g); got != "v1" {
		t.Errorf("the unchanged take, restored alone, brought back %q: want v1", got)
	}
}
