package docker_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/docker"
	"github.com/boxsnap/boxsnap/providers/providertest"
)

// TestDockerRecordSurvivesRestart: the record of a box's last take
// outlives the backend (a new Backend on the same engine and state
// folder, as after boxsnap restarts): the new one answers unchanged for the
// box, and its take after 1 % changed is a few layers on the last take's
// image holding about that 1 %, not the whole box again. A record whose
// snapshot was deleted, or read by another install, is ignored: the check
// answers unknown and the take goes whole.
func TestDockerRecordSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	inDir := func(c *docker.Config) { c.StateDir = dir }
	b := newBackend(t, inDir)
	box := providertest.NewID("bx")
	g := newGuest(t, b, box)
	const kib = 4096 // in the layer, and as much in the volume
	sh(t, b, g, fmt.Sprintf("B=/bin/busybox; $B mkdir -p /srv && $B dd if=/dev/urandom of=/srv/data bs=1k count=%d 2>/dev/null && "+
		"$B dd if=/dev/urandom of=%s/data bs=1k count=%d 2>/dev/null", kib, docker.DefaultVolumePath, kib))
	first := take(t, b, g, box)

	again := newBackend(t, inDir)
	if ch := changes(t, again, g); ch.Changed != providers.ChangedNo {
		t.Errorf("Changes after a restart, of a box unchanged since its take = %+v: want unchanged", ch)
	}
	sh(t, again, g, fmt.Sprintf("B=/bin/busybox; $B dd if=/dev/urandom of=/srv/changed bs=1k count=%d 2>/dev/null && "+
		"$B dd if=/dev/urandom of=%s/changed bs=1k count=%d 2>/dev/null", kib/100, docker.DefaultVolumePath, kib/100))
	second := take(t, again, g, box)
	before, after := imageOf(t, again, first), imageOf(t, again, second)
	// The container's and the volume's layers, each written before the
	// pause and, for what was written in the tick of those reads, in it.
	if n, was := len(after.RootFS.Layers), len(before.RootFS.Layers); n <= was || n > was+4 {
		t.Errorf("the take after a restart and a change has %d layers, the one before %d: want a few more, on it (the container's and the volume's, each before the pause and in it)", n, was)
	}
	if grew, changed := after.Size-before.Size, int64(2*(kib/100)*1024); grew < changed || grew > 3*changed {
		t.Errorf("the take after a restart and %d KiB of %d KiB changed in the layer and as much in the volume added %d bytes: want about what changed", kib/100, kib, grew)
	}

	other := newBackend(t, inDir, func(c *docker.Config) { c.Install = "in7otherinstal1" })
	if ch := changes(t, other, g); ch.Changed != providers.ChangedUnknown {
		t.Errorf("Changes by another install reading this one's record = %+v: want unknown", ch)
	}
	must(t, again.DeleteSnapshot(context.Background(), second, nil))
	afterDelete := newBackend(t, inDir)
	if ch := changes(t, afterDelete, g); ch.Changed != providers.ChangedUnknown {
		t.Errorf("Changes after a restart, of a box whose last take was deleted = %+v: want unknown", ch)
	}
	whole := imageOf(t, afterDelete, take(t, afterDelete, g, box))
	if whole.Size < 2*kib*1024 {
		t.Errorf("the take after its record's snapshot was deleted holds %d bytes: want the whole box, at least %d", whole.Size, 2*kib*1024)
	}
}
