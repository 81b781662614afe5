package docker_test

import (
	"context"
	"testing"

	"github.com/boxsnap/boxsnap/app/demo"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers/docker"
	"github.com/boxsnap/boxsnap/providers/docker/dockertest"
	"github.com/boxsnap/boxsnap/providers/providertest"
)

// TestDockerDemoSeeds: the demo builds its image with docker import, saves
// the busybox-docker box template and makes one running box from it, once;
// the box takes a snapshot as any other.
func TestDockerDemoSeeds(t *testing.T) {
	t.Parallel()
	own := providertest.NewID("in")
	b := newBackend(t, func(c *docker.Config) { c.Install = own })
	ctx := context.Background()
	env, _, _ := coreEnv(t, b, true, own)
	for range 2 {
		must(t, demo.SeedDocker(ctx, env.Boxes, b, dockertest.Busybox, env.Logger))
	}
	boxes, err := env.Boxes.List(ctx, snapshots.Owner())
	must(t, err)
	var made []*snapshots.Box
	for _, x := range boxes {
		if x.BackendID == b.ID() {
			made = append(made, x)
		}
	}
	if len(made) != 1 || made[0].Name != "crisp-dune" {
		t.Fatalf("the demo made %d Docker boxes, want crisp-dune once", len(made))
	}
	t.Cleanup(func() { _ = b.Release(context.Background(), guestOf(made[0])) })
	tpl, err := env.Boxes.Template(ctx, demo.DockerTemplate)
	must(t, err)
	if tpl.Backend != b.ID() || tpl.Source != demo.DockerImage {
		t.Fatalf("the demo's template: %+v", tpl)
	}
	if c, ok := inspect(t, b, made[0].GuestRef); !ok || !c.Running {
		t.Fatal("the demo's box does not run")
	}
	if got := readFile(t, b, guestOf(made[0]), "/srv/app/config.env"); got != "PORT=8080\nMODE=demo\n" {
		t.Fatalf("the demo box holds %q", got)
	}
	takeDone(t, env, env.Core, env.Take, "crisp-dune", "first")
}
