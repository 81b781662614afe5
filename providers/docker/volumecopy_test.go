package docker_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/moby/moby/client"

	"github.com/boxsnap/boxsnap/providers/docker"
	"github.com/boxsnap/boxsnap/providers/providertest"
)

// TestDockerSnapshotWithAVolumeCopyStillRestores: a snapshot whose volume is
// a copy of its own (boxsnap-<ID>, as every snapshot was before the volume
// went into the image) still restores byte-exact and its volume's files
// still read, beside snapshots that hold their volume in their image; and
// a take after that restore holds the volume in its image again.
func TestDockerSnapshotWithAVolumeCopyStillRestores(t *testing.T) {
	b := newBackend(t)
	ctx := context.Background()
	box := providertest.NewID("bx")
	g := newGuest(t, b, box)
	v := docker.DefaultVolumePath
	sh(t, b, g, "B=/bin/busybox; $B mkdir -p /srv "+v+"/old && echo copied > "+v+"/old/note && $B dd if=/dev/urandom of="+v+"/blob bs=1k count=64 2>/dev/null")
	b.TakeVolumeCopies(true)
	old := take(t, b, g, box)
	oldDigest := sh(t, b, g, digestScript)
	b.TakeVolumeCopies(false)
	if _, err := b.Client().VolumeInspect(ctx, "boxsnap-"+old.Ref, client.VolumeInspectOptions{}); err != nil {
		t.Fatalf("the snapshot taken with a volume copy has none: %v", err)
	}
	sh(t, b, g, "B=/bin/busybox; echo later > "+v+"/old/note; $B rm -f "+v+"/blob; echo new > "+v+"/new")
	newer := take(t, b, g, box)
	newDigest := sh(t, b, g, digestScript)
	if img := imageOf(t, b, newer); img.Config.Labels["boxsnap.volume-in"] != v {
		t.Errorf("the take after has the label %q: want its volume in its image, at %s", img.Config.Labels["boxsnap.volume-in"], v)
	}

	var buf bytes.Buffer
	if _, err := b.ReadFile(ctx, old, v+"/old/note", &buf); err != nil || buf.String() != "copied\n" {
		t.Errorf("the volume copy's note reads %q (%v): want copied", buf.String(), err)
	}
	buf.Reset()
	if _, err := b.ReadFile(ctx, newer, v+"/old/note", &buf); err != nil || buf.String() != "later\n" {
		t.Errorf("the image's volume note reads %q (%v): want later", buf.String(), err)
	}
	restore(t, b, g, box, old)
	if got := sh(t, b, g, digestScript); got != oldDigest {
		t.Errorf("the snapshot with a volume copy restored holds\n%s\nwant\n%s", got, oldDigest)
	}
	after := take(t, b, g, box)
	if img := imageOf(t, b, after); img.Config.Labels["boxsnap.volume-in"] != v {
		t.Errorf("the take after the restore has the label %q: want its volume in its image", img.Config.Labels["boxsnap.volume-in"])
	}
	must(t, b.DeleteSnapshot(ctx, old, nil))
	restore(t, b, g, box, newer)
	if got := sh(t, b, g, digestScript); got != newDigest {
		t.Errorf("the snapshot with its volume in its image restored holds\n%s\nwant\n%s", got, newDigest)
	}
	restore(t, b, g, box, after)
	if got := sh(t, b, g, digestScript); got != oldDigest {
		t.Errorf("the take after the volume copy's restore, restored, holds\n%s\nwant\n%s", got, oldDigest)
	}
}
