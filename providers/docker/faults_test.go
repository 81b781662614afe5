package docker_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/docker"
	"github.com/boxsnap/boxsnap/providers/docker/dockertest"
	"github.com/boxsnap/boxsnap/providers/providertest"
)

// ownDaemon starts a daemon of the test's own (the faults stop it or fill
// its disk), its data root on a tmpfs of tmpfsSize when given.
func ownDaemon(t *testing.T, tmpfsSize string) *dockertest.Daemon {
	t.Helper()
	dockertest.Host(t) // skips, or fails under CI, where dockerd cannot run
	dir, err := os.MkdirTemp("", "bsdkr-")
	must(t, err)
	// Last: the folder goes once the daemon has stopped and the tmpfs is
	// unmounted (cleanups run in reverse).
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if tmpfsSize != "" {
		data := filepath.Join(dir, "data")
		must(t, os.MkdirAll(data, 0o700))
		must(t, syscall.Mount("tmpfs", data, "tmpfs", 0, "size="+tmpfsSize))
		t.Cleanup(func() { _ = syscall.Unmount(data, syscall.MNT_DETACH) })
	}
	d, err := dockertest.StartIn(dir)
	must(t, err)
	t.Cleanup(d.Stop)
	must(t, dockertest.Import(context.Background(), d.Host, dockertest.TestImage, nil))
	return d
}

func backendOn(t *testing.T, host string, hook func(string)) *docker.Backend {
	t.Helper()
	b, err := docker.New(docker.Config{ID: "docker", Host: host, Install: install, Network: "none", CopierBinary: dockertest.Busybox, Hook: hook})
	must(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// TestDockerDaemonStoppedMidTake: the daemon stops while a take has copied
// the volume and not committed: the take fails, saying the engine does not
// answer; once the daemon is back, the snapshot is never listed whole (it is
// incomplete, with the backend's words), its delete finishes the clean-up,
// and the box starts and takes again.
func TestDockerDaemonStoppedMidTake(t *testing.T) {
	t.Parallel()
	d := ownDaemon(t, "")
	b := backendOn(t, d.Host, func(p string) {
		if p == "take:copied" {
			d.Halt()
		}
	})
	ctx := context.Background()
	box := providertest.NewID("bx")
	g, err := b.Acquire(ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: box, Kind: docker.KindLinux, Install: install}, Template: dockertest.TestImage})
	must(t, err)
	id := providertest.NewID("sn")
	_, err = b.Snapshot(ctx, g, providers.SnapshotTake{Label: providers.Label{Install: install, Box: box, Snapshot: id}}, nil)
	if err == nil || !errors.Is(err, providers.ErrUnreachable) {
		t.Fatalf("a take whose daemon stopped answered %v; want the engine does not answer", err)
	}
	if _, err := b.HeldSnapshots(ctx); !errors.Is(err, providers.ErrUnreachable) {
		t.Fatalf("a listing with the daemon stopped: %v, want unreachable (which marks nothing)", err)
	}

	again, err := dockertest.StartIn(d.Dir)
	must(t, err)
	t.Cleanup(again.Stop)
	b2 := backendOn(t, d.Host, nil)
	if h, ok := held(t, b2, id); ok && !h.Incomplete {
		t.Fatalf("a take cut by the daemon's stop is listed whole: %+v", h)
	} else if ok && !strings.Contains(h.Error, "never committed") {
		t.Fatalf("its words: %q", h.Error)
	}
	if n := snapshotImages(t, b2, id); n > 1 {
		t.Fatalf("%d images of the cut take", n)
	}
	must(t, b2.DeleteSnapshot(ctx, providers.SnapshotRef{ID: id, Ref: id, Guest: g}, nil))
	if _, ok := held(t, b2, id); ok || volumeExists(t, b2, "boxsnap-"+id) {
		t.Fatal("the delete left a part of the cut take")
	}
	must(t, b2.Start(ctx, g))
	ref := take(t, b2, g, box)
	if h, ok := held(t, b2, ref.ID); !ok || h.Incomplete {
		t.Fatalf("a take after the daemon came back: %v %+v", ok, h)
	}
}

// TestDockerDiskFilling: on a data root too full for the box's volume, the
// plan refuses the take for now, in words with the free room; a take tried
// anyway fails for want of room and leaves no part, and the box runs
// unpaused.
func TestDockerDiskFilling(t *testing.T) {
	t.Parallel()
	d := ownDaemon(t, "64m")
	b := backendOn(t, d.Host, nil)
	ctx := context.Background()
	box := providertest.NewID("bx")
	g, err := b.Acquire(ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: box, Kind: docker.KindLinux, Install: install}, Template: dockertest.TestImage})
	must(t, err)
	writeFile(t, b, g, docker.DefaultVolumePath+"/big", strings.Repeat("x", 36<<20))
	plan, err := b.PlanSnapshots(ctx, g, nil)
	must(t, err)
	if plan.Take.OK || !plan.Take.TryAgain || !strings.Contains(plan.Take.Why, "free; this box's volume holds") {
		t.Fatalf("the plan on a full data root: %+v", plan.Take)
	}
	id := providertest.NewID("sn")
	_, err = b.Snapshot(ctx, g, providers.SnapshotTake{Label: providers.Label{Install: install, Box: box, Snapshot: id}}, nil)
	if !errors.Is(err, providers.ErrNoRoom) {
		t.Fatalf("a take on a full data root: %v, want no room", err)
	}
	if _, ok := held(t, b, id); ok || volumeExists(t, b, "boxsnap-"+id) || snapshotImages(t, b, id) != 0 {
		t.Fatal("a take that ran out of room left a part")
	}
	if c, _ := inspect(t, b, g.Ref); !c.Running || c.Paused {
		t.Fatalf("after the full take the box runs %v, paused %v", c.Running, c.Paused)
	}
}
