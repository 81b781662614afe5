package docker_test

import (
	"context"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/providertest"
)

// TestDockerCheckedVolumesGo: a box's checks leave nothing that holds its
// volume past it: after checks, a restore deletes the old container's
// volume, and a release deletes the box's, each with no container left
// that mounts it.
func TestDockerCheckedVolumesGo(t *testing.T) {
	ctx := context.Background()
	b := newBackend(t)
	box := providertest.NewID("bx")
	g := newGuest(t, b, box)
	writeState(t, b, g, "one")
	first := take(t, b, g, box)
	if ch := changes(t, b, g); ch.Changed != providers.ChangedNo {
		t.Fatalf("Changes right after a take = %+v: want unchanged", ch)
	}
	before, _ := inspect(t, b, g.Ref)
	restore(t, b, g, box, first)
	if volumeExists(t, b, before.Volume) {
		t.Errorf("the volume %s of the container a restore replaced, checked before, is left", before.Volume)
	}
	changes(t, b, g)
	after, _ := inspect(t, b, g.Ref)
	must(t, b.Release(ctx, g))
	if volumeExists(t, b, after.Volume) {
		t.Errorf("the volume %s of the released box, checked before, is left", after.Volume)
	}
	if _, ok := inspect(t, b, after.Volume+"-check"); ok {
		t.Errorf("the released box's volume's checker is left")
	}
}
