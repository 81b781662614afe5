package docker_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/moby/moby/client"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/docker"
	"github.com/boxsnap/boxsnap/providers/providertest"
)

// TestDockerTakeMakesNoCopierOfItsOwn: a take reads the box's volume in
// the volume's checker, the copier kept running for the volume's life,
// and makes no container of its own: in its pause no container is
// labelled with the snapshot, and after it the checker still runs.
func TestDockerTakeMakesNoCopierOfItsOwn(t *testing.T) {
	t.Parallel()
	var snap atomic.Value
	var own, pauses atomic.Int64
	var b *docker.Backend
	b = newBackend(t, func(c *docker.Config) {
		c.Hook = func(p string) {
			if p != "take:paused" {
				return
			}
			pauses.Add(1)
			f := client.Filters{}.Add("label", "boxsnap.snapshot="+snap.Load().(string))
			list, err := b.Client().ContainerList(context.Background(), client.ContainerListOptions{All: true, Filters: f})
			if err != nil {
				t.Error(err)
				return
			}
			own.Add(int64(len(list.Items)))
		}
	})
	box := providertest.NewID("bx")
	g := newGuest(t, b, box)
	for i, state := range []string{"first", "second"} {
		writeState(t, b, g, state)
		id := providertest.NewID("sn")
		snap.Store(id)
		_, err := b.Snapshot(context.Background(), g, providers.SnapshotTake{Label: providers.Label{Install: install, Box: box, Snapshot: id}}, nil)
		must(t, err)
		if n := own.Load(); n != 0 {
			t.Errorf("take %d: in its pause %d containers were labelled with the snapshot: want none, its copier the volume's checker", i+1, n)
		}
	}
	if n := pauses.Load(); n != 2 {
		t.Fatalf("the two takes of a changed box paused it %d times: want 2", n)
	}
	vol, ok := inspect(t, b, g.Ref)
	if !ok {
		t.Fatal("the box is gone")
	}
	if c, ok := inspect(t, b, vol.Volume+"-check"); !ok || !c.Running {
		t.Errorf("after the takes the volume's checker is %+v (exists %v): want running", c, ok)
	}
}
