package docker_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/moby/moby/client"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/docker"
	"github.com/boxsnap/boxsnap/providers/providertest"
)

// take takes a snapshot of g with a fresh ID.
func take(t testing.TB, b *docker.Backend, g providers.Guest, box string) providers.SnapshotRef {
	t.Helper()
	id := providertest.NewID("sn")
	taken, err := b.Snapshot(context.Background(), g, providers.SnapshotTake{Label: providers.Label{Install: install, Box: box, Snapshot: id}}, nil)
	must(t, err)
	return providers.SnapshotRef{ID: id, Ref: taken.Ref, Guest: g, Storage: taken.Storage}
}

func held(t testing.TB, b *docker.Backend, id string) (providers.HeldSnapshot, bool) {
	t.Helper()
	list, err := b.HeldSnapshots(context.Background())
	must(t, err)
	for _, h := range list {
		if h.Label.Snapshot == id {
			return h, true
		}
	}
	return providers.HeldSnapshot{}, false
}

// restore runs the plan's order, the undo taken by Snapshot as the core does,
// and answers the undo.
func restore(t testing.TB, b *docker.Backend, g providers.Guest, box string, ref providers.SnapshotRef) providers.SnapshotRef {
	t.Helper()
	ctx := context.Background()
	plan, err := b.PlanSnapshots(ctx, g, &ref)
	must(t, err)
	if plan.Restore.Way != providers.WayNewGuest {
		t.Fatalf("the plan's restore is %s (%s), want new-guest", plan.Restore.Way, plan.Restore.Why)
	}
	if plan.Restore.Excludes != "what the box writes between its undo and the old container's stop, about a second" || plan.Restore.Order[0] != providers.StepUndo {
		t.Fatalf("the plan's restore leaves out %q, in the order %v", plan.Restore.Excludes, plan.Restore.Order)
	}
	var undo providers.SnapshotRef
	for _, step := range plan.Restore.Order {
		if step == providers.StepUndo {
			undo = take(t, b, g, box)
			continue
		}
		if _, err := b.RestoreSnapshot(ctx, g, ref, step, nil); err != nil {
			t.Fatalf("restore step %s: %v", step, err)
		}
	}
	return undo
}

func inspect(t testing.TB, b *docker.Backend, name string) (containerInfo, bool) {
	t.Helper()
	r, err := b.Client().ContainerInspect(context.Background(), name, client.ContainerInspectOptions{})
	if err != nil {
		if strings.Contains(err.Error(), "No such container") {
			return containerInfo{}, false
		}
		t.Fatal(err)
	}
	c := r.Container
	info := containerInfo{ID: c.ID, Running: c.State.Running, Paused: c.State.Paused, Volume: c.Config.Labels["boxsnap.volume"]}
	for _, e := range c.Config.Env {
		if v, ok := strings.CutPrefix(e, "BOXSNAP_IDENTITY="); ok {
			info.Identity = v
		}
	}
	return info, true
}

type containerInfo struct {
	ID, Volume, Identity string
	Running, Paused      bool
}

func volumeExists(t testing.TB, b *docker.Backend, name string) bool {
	t.Helper()
	_, err := b.Client().VolumeInspect(context.Background(), name, client.VolumeInspectOptions{})
	return err == nil
}

// snapshotImages lists the images labelled with a snapshot's ID.
func snapshotImages(t testing.TB, b *docker.Backend, id string) int {
	t.Helper()
	imgs, err := b.Client().ImageList(context.Background(), client.ImageListOptions{Filters: client.Filters{}.Add("label", "boxsnap.snapshot="+id)})
	must(t, err)
	return len(imgs.Items)
}

// TestConfirmedTakeDocker: a take cut short is never ready. Cut before its
// commit or before its tag, the take fails, leaves no part, and the box runs
// unpaused; cut as a killed worker would (after the commit, its clean-up
// never run), the snapshot is listed incomplete with the backend's words,
// refuses a restore, and its delete finishes the clean-up.
func TestConfirmedTakeDocker(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"take:copied", "take:committed"} {
		t.Run("CancelledAt_"+point, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			b := newBackend(t, func(c *docker.Config) {
				c.Hook = func(p string) {
					if p == point {
						cancel()
					}
				}
			})
			box := providertest.NewID("bx")
			g := newGuest(t, b, box)
			id := providertest.NewID("sn")
			_, err := b.Snapshot(ctx, g, providers.SnapshotTake{Label: providers.Label{Install: install, Box: box, Snapshot: id}}, nil)
			if err == nil {
				t.Fatal("a take cancelled before its tag answered a snapshot")
			}
			if h, ok := held(t, b, id); ok {
				t.Fatalf("a take cut short is listed: %+v", h)
			}
			if n := snapshotImages(t, b, id); n != 0 || volumeExists(t, b, "boxsnap-"+id) {
				t.Fatalf("a take cut short left %d images, volume %v", n, volumeExists(t, b, "boxsnap-"+id))
			}
			if c, _ := inspect(t, b, g.Ref); !c.Running || c.Paused {
				t.Fatalf("after the take cut short the box runs %v, paused %v", c.Running, c.Paused)
			}
		})
	}
	t.Run("KilledBeforeTheTag", func(t *testing.T) {
		t.Parallel()
		b := newBackend(t, func(c *docker.Config) {
			c.Hook = func(p string) {
				if p == "take:committed" {
					runtime.Goexit() // as a kill: the deferred unpause runs, nothing else
				}
			}
		})
		box := providertest.NewID("bx")
		g := newGuest(t, b, box)
		writeState(t, b, g, "before the cut")
		id := providertest.NewID("sn")
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = b.Snapshot(context.Background(), g, providers.SnapshotTake{Label: providers.Label{Install: install, Box: box, Snapshot: id}}, nil)
			t.Error("the take went on past its kill")
		}()
		<-done
		h, ok := held(t, b, id)
		if !ok || !h.Incomplete || !strings.Contains(h.Error, "never committed") {
			t.Fatalf("a take cut before its tag is listed %v: %+v; want incomplete, its image never committed", ok, h)
		}
		ref := providers.SnapshotRef{ID: id, Ref: id, Guest: g}
		plan, err := b.PlanSnapshots(context.Background(), g, &ref)
		must(t, err)
		if plan.Restore.Way != providers.WayNone || plan.Fork.OK {
			t.Fatalf("an incomplete snapshot is offered: restore %s, fork %v", plan.Restore.Way, plan.Fork.OK)
		}
		must(t, b.DeleteSnapshot(context.Background(), ref, nil))
		if _, ok := held(t, b, id); ok || snapshotImages(t, b, id) != 0 || volumeExists(t, b, "boxsnap-"+id) {
			t.Fatal("the delete of an incomplete snapshot left a part")
		}
	})
}

// TestDockerVolumeComesBack: a file in the box's volume and one in its
// container's layer both come back on a restore; the box keeps its name and
// its identity value; the old container and its volume are gone; and the
// undo holds what the restore replaced.
func TestDockerVolumeComesBack(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	box := providertest.NewID("bx")
	g := newGuest(t, b, box)
	writeState(t, b, g, "before the migration")
	target := take(t, b, g, box)
	writeState(t, b, g, "after the migration")
	old, _ := inspect(t, b, g.Ref)
	oldHost := hostID(t, b, g)

	undo := restore(t, b, g, box, target)
	if got := readState(t, b, g); got != "before the migration" {
		t.Fatalf("after the restore the box holds %q", got)
	}
	now, ok := inspect(t, b, g.Ref)
	if !ok || !now.Running || now.ID == old.ID {
		t.Fatalf("after the swap the box's container is %+v (was %s)", now, old.ID)
	}
	if now.Identity != box || old.Identity != box {
		t.Fatalf("the identity value was %q and is %q; a same-box swap passes on %q", old.Identity, now.Identity, box)
	}
	if got := hostID(t, b, g); got != oldHost {
		t.Fatalf("the swap reset the box's host ID (%s, was %s)", got, oldHost)
	}
	for _, name := range []string{g.Ref + "-next", g.Ref + "-prev"} {
		if _, ok := inspect(t, b, name); ok {
			t.Fatalf("%s is left after the swap", name)
		}
	}
	if volumeExists(t, b, old.Volume) || now.Volume == old.Volume {
		t.Fatalf("the old container's volume %s is left (the new one is %s)", old.Volume, now.Volume)
	}
	restore(t, b, g, box, undo)
	if got := readState(t, b, g); got != "after the migration" {
		t.Fatalf("the undo brought back %q, want what the restore replaced", got)
	}
}

// TestDockerForkNewIdentity: a fork is a new container with a copy of the
// snapshot's volume and its own identity value; its source's is unchanged.
func TestDockerForkNewIdentity(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	ctx := context.Background()
	box := providertest.NewID("bx")
	g := newGuest(t, b, box)
	writeState(t, b, g, "the forked state")
	srcHost := hostID(t, b, g)
	ref := take(t, b, g, box)
	forkID := providertest.NewID("bx")
	fg, err := b.ForkSnapshot(ctx, ref, providers.BoxIdentity{ID: forkID, Name: "fork", Kind: docker.KindLinux, Install: install}, nil)
	must(t, err)
	t.Cleanup(func() { _ = b.Release(context.Background(), fg) })
	must(t, b.Start(ctx, fg))
	src, _ := inspect(t, b, g.Ref)
	fork, _ := inspect(t, b, fg.Ref)
	if fork.Identity != forkID || src.Identity != box || fork.Identity == src.Identity {
		t.Fatalf("identity values: source %q, fork %q; want %q and a new %q", src.Identity, fork.Identity, box, forkID)
	}
	if fork.Volume == src.Volume {
		t.Fatal("the fork shares its source's volume")
	}
	// The image's identity reset saw a new value: the fork's host ID is its
	// own; its source's is unchanged.
	if got := hostID(t, b, fg); got == srcHost {
		t.Fatalf("the fork kept its source's host ID %s", got)
	}
	if got := hostID(t, b, g); got != srcHost {
		t.Fatalf("the source's host ID changed from %s to %s", srcHost, got)
	}
	if got := readState(t, b, fg); got != "the forked state" {
		t.Fatalf("the fork holds %q", got)
	}
}

// TestDockerKeepOutlivesRelease: a kept snapshot's image and volume copy stay
// as they are past the box's release, still listed with their keep date, and
// a fork from them runs; on a host whose boxes go with it, Keep is off with
// why.
func TestDockerKeepOutlivesRelease(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	ctx := context.Background()
	box := providertest.NewID("bx")
	g := newGuest(t, b, box)
	writeState(t, b, g, "kept state")
	ref := take(t, b, g, box)
	plan, err := b.PlanSnapshots(ctx, g, &ref)
	must(t, err)
	if plan.Keep.Way != providers.KeepsAsIs {
		t.Fatalf("keep is %s (%s), want as-is", plan.Keep.Way, plan.Keep.Why)
	}
	until := mustDay(t, "2031-03-04")
	must(t, b.SetKeptUntil(ctx, ref, &until))
	must(t, b.Release(ctx, g))
	if _, ok := inspect(t, b, g.Ref); ok {
		t.Fatal("the released box's container is still there")
	}
	h, ok := held(t, b, ref.ID)
	if !ok || h.Incomplete || h.Label.KeptUntil == nil || !h.Label.KeptUntil.Equal(until) {
		t.Fatalf("after the release the kept snapshot is listed %v: %+v", ok, h)
	}
	fg, err := b.ForkSnapshot(ctx, ref, providers.BoxIdentity{ID: providertest.NewID("bx"), Kind: docker.KindLinux, Install: install}, nil)
	must(t, err)
	t.Cleanup(func() { _ = b.Release(context.Background(), fg) })
	must(t, b.Start(ctx, fg))
	if got := readState(t, b, fg); got != "kept state" {
		t.Fatalf("a fork of the kept snapshot holds %q", got)
	}

	gone := newBackend(t, func(c *docker.Config) { c.BoxesGoWithHost = true })
	if s := gone.Snapshotting(docker.KindLinux); s.KeepsPastRelease != providers.KeepsNo {
		t.Fatalf("on a host whose boxes go with it keep is %s", s.KeepsPastRelease)
	}
	g2 := newGuest(t, gone, providertest.NewID("bx"))
	plan, err = gone.PlanSnapshots(ctx, g2, nil)
	must(t, err)
	if plan.Keep.Way != providers.KeepsNo || plan.Keep.Why != docker.KeepOffWhy || !strings.Contains(plan.Keep.Why, "Hetzner deletes a host with no boxes") {
		t.Fatalf("keep on such a host: %+v", plan.Keep)
	}
}

// TestDockerDeleteRemovesBothAndNothingElse: a delete removes the snapshot's
// image tag and volume copy; a box restored from it keeps running on its
// image, and another snapshot's stay.
func TestDockerDeleteRemovesBothAndNothingElse(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	ctx := context.Background()
	box := providertest.NewID("bx")
	g := newGuest(t, b, box)
	writeState(t, b, g, "one")
	first := take(t, b, g, box)
	undo := restore(t, b, g, box, first)
	second := take(t, b, g, box)
	must(t, b.DeleteSnapshot(ctx, first, nil))
	if _, ok := held(t, b, first.ID); ok || volumeExists(t, b, "boxsnap-"+first.ID) {
		t.Fatal("the deleted snapshot is still listed or its volume is left")
	}
	for _, keep := range []providers.SnapshotRef{undo, second} {
		if h, ok := held(t, b, keep.ID); !ok || h.Incomplete {
			t.Fatalf("another snapshot went with the delete: %v %+v", ok, h)
		}
	}
	if c, ok := inspect(t, b, g.Ref); !ok || !c.Running {
		t.Fatal("the box made from the deleted snapshot's image stopped")
	}
	if got := readState(t, b, g); got != "one" {
		t.Fatalf("the box holds %q", got)
	}
}

// TestDockerRemovedBehindBack: a box's container removed outside boxsnap
// is gone to Status, a take says so, and HeldSnapshots still lists its
// snapshots.
func TestDockerRemovedBehindBack(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	ctx := context.Background()
	box := providertest.NewID("bx")
	g := newGuest(t, b, box)
	ref := take(t, b, g, box)
	_, err := b.Client().ContainerRemove(ctx, g.Ref, client.ContainerRemoveOptions{Force: true})
	must(t, err)
	st, err := b.Status(ctx, g)
	must(t, err)
	if st.Exists {
		t.Fatal("Status says a removed container exists")
	}
	_, err = b.Snapshot(ctx, g, providers.SnapshotTake{Label: providers.Label{Install: install, Box: box, Snapshot: providertest.NewID("sn")}}, nil)
	if !errors.Is(err, providers.ErrNotFound) {
		t.Fatalf("a take of a removed container: %v, want not found", err)
	}
	if h, ok := held(t, b, ref.ID); !ok || h.Incomplete {
		t.Fatalf("its snapshot is listed %v %+v", ok, h)
	}
	if !slices.Contains([]string{"docker"}, ref.Storage) {
		t.Fatalf("storage %q", ref.Storage)
	}
}

// TestDockerBoxBounds: a box's container runs as its template's user, with
// its template's environment and bounds (the backend's where it gives
// none), never privileged, with no mount but its own volume; a restore's
// new container keeps them.
func TestDockerBoxBounds(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	ctx := context.Background()
	box := providertest.NewID("bx")
	g, err := b.Acquire(ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: box, Kind: docker.KindLinux, Install: install},
		Template: "boxsnap-test/busybox:1", User: "65534:65534", Env: map[string]string{"GREETING": "hello"},
		Limits: providers.BoxLimits{MemoryBytes: 256 << 20, Processes: 64}})
	must(t, err)
	t.Cleanup(func() { _ = b.Release(context.Background(), g) })
	check := func(when string) {
		t.Helper()
		r, err := b.Client().ContainerInspect(ctx, g.Ref, client.ContainerInspectOptions{})
		must(t, err)
		c := r.Container
		if !c.State.Running || c.HostConfig.Privileged || c.Config.User != "65534:65534" {
			t.Fatalf("%s: running %v, privileged %v, user %q", when, c.State.Running, c.HostConfig.Privileged, c.Config.User)
		}
		if c.HostConfig.Memory != 256<<20 || c.HostConfig.PidsLimit == nil || *c.HostConfig.PidsLimit != 64 {
			t.Fatalf("%s: memory %d, pids %v; want the template's", when, c.HostConfig.Memory, c.HostConfig.PidsLimit)
		}
		if len(c.HostConfig.Ulimits) != 1 || c.HostConfig.Ulimits[0].Name != "nofile" || c.HostConfig.Ulimits[0].Hard != docker.DefaultOpenFiles {
			t.Fatalf("%s: ulimits %+v; want the backend's open files", when, c.HostConfig.Ulimits)
		}
		if len(c.HostConfig.Binds) != 0 || len(c.Mounts) != 1 || c.Mounts[0].Type != "volume" || c.Mounts[0].Destination != docker.DefaultVolumePath {
			t.Fatalf("%s: mounts %+v binds %v; want its own volume only", when, c.Mounts, c.HostConfig.Binds)
		}
		if !slices.Contains(c.Config.Env, "GREETING=hello") || !slices.Contains(c.Config.Env, "BOXSNAP_IDENTITY="+box) {
			t.Fatalf("%s: env %v", when, c.Config.Env)
		}
	}
	check("made")
	ref := take(t, b, g, box)
	restore(t, b, g, box, ref)
	check("after a restore")
}

// TestDockerDoctor: the doctor says the engine answers with the API version
// it negotiated, and names a box left paused with the command that unpauses
// it; an engine that does not answer gets the fix for how it is reached.
func TestDockerDoctor(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	ctx := context.Background()
	g := newGuest(t, b, providertest.NewID("bx"))
	_, err := b.Client().ContainerPause(ctx, g.Ref, client.ContainerPauseOptions{})
	must(t, err)
	checks := b.Doctor(ctx)
	if len(checks) == 0 || !checks[0].OK || !strings.Contains(checks[0].Detail, "API 1.") || !strings.Contains(checks[0].Detail, "(negotiated)") {
		t.Fatalf("the doctor's first check: %+v", checks)
	}
	paused := false
	for _, c := range checks {
		if !c.OK && c.Fix == "Run docker unpause "+g.Ref+" (or take a snapshot of it: the take ends the pause)" {
			paused = true
		}
	}
	if !paused {
		t.Fatalf("the doctor does not name the paused box: %+v", checks)
	}
	must(t, b.Start(ctx, g))

	for host, fix := range map[string]string{
		"unix://" + t.TempDir() + "/none.sock": "start the engine",
		"ssh://nobody@127.0.0.1:1":             "ssh nobody@127.0.0.1:1 docker version",
	} {
		gone, err := docker.New(docker.Config{ID: "far", Host: host, Install: install})
		must(t, err)
		c := gone.Doctor(ctx)
		if len(c) != 1 || c[0].OK || !strings.Contains(c[0].Fix, fix) {
			t.Fatalf("the doctor of %s: %+v", host, c)
		}
	}
}

// TestDockerNewRefuses: a configuration that would reach an engine unsafely
// or not at all is refused in words, before any call.
func TestDockerNewRefuses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cfg  docker.Config
		want string
	}{
		{docker.Config{Host: "unix:///x"}, "a backend ID is required"},
		{docker.Config{ID: "d", Host: "unix:///x"}, "the install ID is required"},
		{docker.Config{ID: "d", Install: install, Host: "tcp://10.0.0.2:2375"}, "a tcp:// engine needs TLS"},
		{docker.Config{ID: "d", Install: install, Host: "tcp://10.0.0.2:2376", TLSCACert: "/ca.pem"}, "TLS needs the CA, the certificate and the key: 1 of 3 are set"},
		{docker.Config{ID: "d", Install: install, Host: "http://10.0.0.2"}, "is none of unix://, tcp:// and ssh://"},
		{docker.Config{ID: "d", Install: install, Host: "ssh://me:secret@host"}, "must not hold a password"},
		{docker.Config{ID: "d", Install: install, Host: "ssh://-oProxyCommand=x"}, "is not a host name"},
		{docker.Config{ID: "d", Install: install, Host: "ssh://host/path"}, "must be ssh://[user@]host[:port]"},
	} {
		_, err := docker.New(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want %q", c.cfg, err, c.want)
		}
	}
}
