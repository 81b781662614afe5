package docker_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/docker"
	"github.com/boxsnap/boxsnap/providers/docker/dockertest"
	"github.com/boxsnap/boxsnap/providers/providertest"
)

// A taker process: this test binary started again with takerEnv set takes
// one snapshot of the box takerBox with the state folder takerState, and
// at the take's pause writes workerMarker and waits there for the kill.
const (
	takerEnv   = "BOXSNAP_DOCKER_TAKER"
	takerState = "BOXSNAP_DOCKER_TAKER_STATE"
	takerBox   = "BOXSNAP_DOCKER_TAKER_BOX"
)

func runTakerProcess() int {
	marker := os.Getenv(workerMarker)
	b, err := docker.New(docker.Config{ID: "docker", Host: os.Getenv(hostEnv), Install: install, Network: "none", CopierBinary: dockertest.Busybox,
		StateDir: os.Getenv(takerState), Hook: func(point string) {
			if point == "take:paused" {
				_ = os.WriteFile(marker, []byte(point), 0o600)
				select {} // until killed
			}
		}})
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	box := os.Getenv(takerBox)
	_, err = b.Snapshot(context.Background(), providers.Guest{Ref: "boxsnap-" + box},
		providers.SnapshotTake{Label: providers.Label{Install: install, Box: box, Snapshot: providertest.NewID("sn")}}, nil)
	os.Stderr.WriteString("the take went on past its pause: " + errString(err) + "\n")
	return 1
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

// execWithin runs a command in the box and says whether it ended, with
// status 0, before ctx: a command in a frozen box never runs.
func execWithin(ctx context.Context, b *docker.Backend, g providers.Guest, cmd ...string) error {
	ex, err := b.Client().ExecCreate(ctx, g.Ref, client.ExecCreateOptions{Cmd: cmd, AttachStdout: true, AttachStderr: true})
	if err != nil {
		return err
	}
	att, err := b.Client().ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		return err
	}
	defer att.Close()
	done := make(chan error, 1)
	go func() {
		var out bytes.Buffer
		_, err := stdcopy.StdCopy(&out, &out, att.Reader)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestDockerKilledMidPauseThawsAtStart: boxsnap killed while a take holds
// its box paused never leaves the box paused past its restart: the
// backend's next start on the same state folder lets the box run again,
// the engine says it runs and is not paused, and a command in it answers;
// the next take of the box is whole.
func TestDockerKilledMidPauseThawsAtStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	inDir := func(c *docker.Config) { c.StateDir = dir }
	b := newBackend(t, inDir)
	box := providertest.NewID("bx")
	g := newGuest(t, b, box)
	writeState(t, b, g, "v1")

	marker := filepath.Join(t.TempDir(), "paused")
	log := filepath.Join(t.TempDir(), "taker.log")
	out, err := os.Create(log)
	must(t, err)
	defer out.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), takerEnv+"=1", takerState+"="+dir, takerBox+"="+box, hostEnv+"="+dockertest.Host(t), workerMarker+"="+marker)
	cmd.Stdout, cmd.Stderr = out, out
	must(t, cmd.Start())
	killed := false
	kill := func() {
		if !killed {
			killed = true
			_ = cmd.Process.Signal(syscall.SIGKILL)
			_ = cmd.Wait()
		}
	}
	t.Cleanup(kill)
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			raw, _ := os.ReadFile(log)
			t.Fatalf("the taker never reached the take's pause:\n%s", raw)
		}
	}
	kill()

	again := newBackend(t, inDir) // boxsnap's restart
	if c, ok := inspect(t, again, g.Ref); !ok || !c.Running || c.Paused {
		t.Fatalf("after the restart the box is %+v (exists %v): want running, not paused", c, ok)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := execWithin(ctx, again, g, "/bin/busybox", "true"); err != nil {
		t.Fatalf("after the restart a command in the box does not answer (%v): the box is left frozen", err)
	}
	writeState(t, again, g, "v2")
	take(t, again, g, box)
	if got := readState(t, again, g); got != "v2" {
		t.Fatalf("the box holds %q after the take", got)
	}
}

// TestDockerTakeLeavesAPersonsPause: a take of a box a person paused by
// hand takes it as it is and leaves it paused.
func TestDockerTakeLeavesAPersonsPause(t *testing.T) {
	t.Parallel()
	b := newBackend(t, func(c *docker.Config) { c.StateDir = t.TempDir() })
	box := providertest.NewID("bx")
	g := newGuest(t, b, box)
	writeState(t, b, g, "paused by hand")
	ctx := context.Background()
	_, err := b.Client().ContainerPause(ctx, g.Ref, client.ContainerPauseOptions{})
	must(t, err)
	t.Cleanup(func() {
		_, _ = b.Client().ContainerUnpause(context.Background(), g.Ref, client.ContainerUnpauseOptions{})
	})
	take(t, b, g, box)
	if c, _ := inspect(t, b, g.Ref); !c.Running || !c.Paused {
		t.Fatalf("after a take of a box a person paused the box runs %v, paused %v: want it still paused", c.Running, c.Paused)
	}
	take(t, b, g, box)
	if c, _ := inspect(t, b, g.Ref); !c.Paused {
		t.Fatal("a second take unpaused the box a person paused")
	}
}
