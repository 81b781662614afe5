package docker_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/docker"
	"github.com/boxsnap/boxsnap/providers/providertest"
)

// sh runs a shell command in the box's container and answers its output;
// it fails the test when the command fails.
func sh(t testing.TB, b *docker.Backend, g providers.Guest, script string) string {
	t.Helper()
	ctx := context.Background()
	ex, err := b.Client().ExecCreate(ctx, g.Ref, client.ExecCreateOptions{Cmd: []string{"/bin/busybox", "sh", "-c", script}, AttachStdout: true, AttachStderr: true})
	must(t, err)
	att, err := b.Client().ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	must(t, err)
	defer att.Close()
	var out, errs bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &errs, att.Reader); err != nil {
		t.Fatalf("read %q's output: %v", script, err)
	}
	st, err := b.Client().ExecInspect(ctx, ex.ID, client.ExecInspectOptions{})
	must(t, err)
	if st.ExitCode != 0 {
		t.Fatalf("%q ended with %d: %s%s", script, st.ExitCode, out.String(), errs.String())
	}
	return out.String()
}

// changes asks Changes and fails the test on an error.
func changes(t testing.TB, b *docker.Backend, g providers.Guest) providers.ChangeCheck {
	t.Helper()
	ch, err := b.Changes(context.Background(), g)
	must(t, err)
	return ch
}

// TestDockerChangesSaysUnchanged: a Docker box that changed nothing since
// its last take answers "no", running or stopped; a change in the
// container's layer (a file written, a file deleted) or in its volume
// answers "yes" with the paths it counts, each until the next take.
func TestDockerChangesSaysUnchanged(t *testing.T) {
	b := newBackend(t)
	box := providertest.NewID("bx")
	g := newGuest(t, b, box)
	writeState(t, b, g, "fresh")
	if c := b.ChangeCadence(); c.Every.Seconds() != 15 || !strings.Contains(c.Why, "without a take") {
		t.Errorf("ChangeCadence = %+v: want every 15 seconds, as the local backend, with a check that takes nothing", c)
	}
	if ch := changes(t, b, g); ch.Changed != providers.ChangedUnknown || ch.Why == "" {
		t.Errorf("Changes before any take = %+v: want unknown, and why", ch)
	}
	take(t, b, g, box)
	if ch := changes(t, b, g); ch.Changed != providers.ChangedNo || !ch.Running {
		t.Fatalf("Changes of a running box right after a take = %+v: want unchanged", ch)
	}
	for i, change := range []func(){
		func() { writeFile(t, b, g, layerFile, "a change in the layer") },
		func() { writeFile(t, b, g, volumeFile, "a change in the volume") },
		func() { sh(t, b, g, "rm "+layerFile) },
		func() { sh(t, b, g, "rm "+volumeFile) },
		func() { sh(t, b, g, "touch "+docker.DefaultVolumePath) },
	} {
		change()
		ch := changes(t, b, g)
		if ch.Changed != providers.ChangedYes || ch.Paths < 1 {
			t.Errorf("change %d: Changes = %+v: want changed, with the paths counted", i, ch)
		}
		if again := changes(t, b, g); again.Changed != providers.ChangedYes {
			t.Errorf("change %d: Changes asked again before a take = %+v: want still changed", i, again)
		}
		take(t, b, g, box)
		if ch := changes(t, b, g); ch.Changed != providers.ChangedNo {
			t.Errorf("change %d: Changes right after the take that follows it = %+v: want unchanged", i, ch)
		}
	}
	must(t, b.Stop(context.Background(), g))
	if ch := changes(t, b, g); ch.Running || ch.Changed != providers.ChangedNo {
		t.Errorf("Changes of the box stopped after its take = %+v: want stopped and unchanged", ch)
	}
	writeFile(t, b, g, layerFile, fmt.Sprintf("written while stopped in %s", g.Ref))
	if ch := changes(t, b, g); ch.Changed != providers.ChangedYes {
		t.Errorf("Changes of a stopped box whose layer was written = %+v: want changed", ch)
	}
}

// TestDockerChangesSeesAWriteThatKeepsTheStat: a file of the container's
// layer written again with the same size and its modification time set
// back (as the archive endpoint, tar and cp -p write) is a change: Changes
// answers changed, and the next take holds the new content.
func TestDockerChangesSeesAWriteThatKeepsTheStat(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	box := providertest.NewID("bx")
	g := newGuest(t, b, box)
	writeFile(t, b, g, layerFile, "v1")
	take(t, b, g, box)
	writeFile(t, b, g, layerFile, "v2") // the same size, the same time
	if ch := changes(t, b, g); ch.Changed != providers.ChangedYes {
		t.Fatalf("Changes after a write that kept the file's size and time = %+v: want changed", ch)
	}
	second := take(t, b, g, box)
	writeFile(t, b, g, layerFile, "v3")
	restore(t, b, g, box, second)
	if got := readFile(t, b, g, layerFile); got != "v2" {
		t.Errorf("the take after the write brought back %q: want v2", got)
	}
}
