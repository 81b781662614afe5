package docker_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/moby/moby/client"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/docker"
	"github.com/boxsnap/boxsnap/providers/providertest"
)

// digestScript prints every path of the box's /srv and its volume with its
// mode, and the MD5 of each file: two boxes that print the same hold the
// same bytes there.
const digestScript = "B=/bin/busybox; $B find /srv " + docker.DefaultVolumePath + " /bin -exec $B stat -c '%A %n' {} + | $B sort; " +
	"$B find /srv " + docker.DefaultVolumePath + " -type f | $B sort | $B xargs $B md5sum"

// imageOf reads a snapshot's image.
func imageOf(t testing.TB, b *docker.Backend, ref providers.SnapshotRef) client.ImageInspectResult {
	t.Helper()
	img, err := b.Client().ImageInspect(context.Background(), "boxsnap/snapshot:"+ref.Ref)
	must(t, err)
	return img
}

// TestDockerTakeCopiesOnlyChanges: a take after 1 % of the container's
// layer and 1 % of its volume changed adds to the last take's image layers
// holding about those 2 % (the volume's part reads about 1 % of the
// volume's bytes, and no copy of the whole volume is made); and every
// snapshot of a chain of ten, each a layer on the one
// before with files written and deleted (some while the take copies the
// volume, before its pause), restores byte-exact after every snapshot
// before it is deleted.
func TestDockerTakeCopiesOnlyChanges(t *testing.T) {
	// late, when set, changes the box after the take's first pass over
	// its volume and before its pause: the pause must copy it.
	var late func()
	b := newBackend(t, func(c *docker.Config) {
		c.Hook = func(point string) {
			if point == "take:prepared" && late != nil {
				late()
			}
		}
	})
	box := providertest.NewID("bx")
	g := newGuest(t, b, box)
	const kib = 4096 // in the layer, and as much in the volume
	sh(t, b, g, fmt.Sprintf("B=/bin/busybox; $B mkdir -p /srv && $B dd if=/dev/urandom of=/srv/data bs=1k count=%d 2>/dev/null && "+
		"$B dd if=/dev/urandom of=%s/data bs=1k count=%d 2>/dev/null", kib, docker.DefaultVolumePath, kib))
	first := take(t, b, g, box)
	sh(t, b, g, fmt.Sprintf("B=/bin/busybox; $B dd if=/dev/urandom of=/srv/changed bs=1k count=%d 2>/dev/null && "+
		"$B dd if=/dev/urandom of=%s/changed bs=1k count=%d 2>/dev/null", kib/100, docker.DefaultVolumePath, kib/100))
	second := take(t, b, g, box)
	before, after := imageOf(t, b, first), imageOf(t, b, second)
	// The container's and the volume's layers, each written before the
	// pause and, for what was written in the tick of those reads, in it.
	if n, was := len(after.RootFS.Layers), len(before.RootFS.Layers); n <= was || n > was+4 {
		t.Errorf("the take after a change has %d layers, the one before %d: want a few more, on it (the container's and the volume's, each before the pause and in it)", n, was)
	}
	grew := after.Size - before.Size
	if changed := int64(2 * (kib / 100) * 1024); grew < changed || grew > 3*changed {
		t.Errorf("the take after %d KiB of %d KiB changed in the layer and as much in the volume added %d bytes: want about what changed", kib/100, kib, grew)
	}
	vols, err := b.Client().VolumeList(context.Background(), client.VolumeListOptions{})
	must(t, err)
	for _, v := range vols.Items {
		if v.Name == "boxsnap-"+second.Ref {
			t.Errorf("the take after a change made the volume copy %s: want the volume's changes in its image", v.Name)
		}
	}

	type link struct {
		ref    providers.SnapshotRef
		digest string
	}
	var chain []link
	for i := range 10 {
		script := fmt.Sprintf("B=/bin/busybox; echo %d > /srv/n; $B dd if=/dev/urandom of=/srv/f%d bs=1k count=8 2>/dev/null; $B rm -f /srv/f%d; "+
			"echo %d > %s/n; $B dd if=/dev/urandom of=%s/v%d bs=1k count=8 2>/dev/null; $B rm -f %s/v%d",
			i, i, i-2, i, docker.DefaultVolumePath, docker.DefaultVolumePath, i, docker.DefaultVolumePath, i-2)
		if i > 0 {
			script += fmt.Sprintf("; $B mkdir -p /srv/g%d/h && echo %d > /srv/g%d/h/x; $B rm -rf /srv/g%d", i, i, i, i-1) // a tree made, the last one deleted
		}
		if i == 4 {
			script += "; $B rm -f /bin/od" // a path of the box's image
		}
		if i == 6 {
			script += "; $B rm -rf /srv && $B mkdir /srv && echo again > /srv/n" // a folder deleted and made again
		}
		sh(t, b, g, script)
		late = func() {
			sh(t, b, g, fmt.Sprintf("B=/bin/busybox; V=%s; echo %d > $V/late; $B mkdir -p $V/d%d/e && echo %d > $V/d%d/e/f; $B rm -rf $V/d%d; "+
				"$B chmod 700 $V/d%d; echo late%d > /srv/late", docker.DefaultVolumePath, i, i, i, i, i-1, i, i))
		}
		chain = append(chain, link{ref: take(t, b, g, box), digest: sh(t, b, g, digestScript)})
		late = nil
	}
	ctx := context.Background()
	must(t, b.DeleteSnapshot(ctx, first, nil))
	must(t, b.DeleteSnapshot(ctx, second, nil))
	for i, l := range chain {
		restore(t, b, g, box, l.ref)
		if got := sh(t, b, g, digestScript); got != l.digest {
			t.Errorf("snapshot %d of the chain, restored after the ones before it were deleted, holds\n%s\nwant\n%s", i, got, l.digest)
		}
		must(t, b.DeleteSnapshot(ctx, l.ref, nil))
	}
}
