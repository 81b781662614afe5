package docker_test

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/docker"
	"github.com/boxsnap/boxsnap/providers/docker/dockertest"
	"github.com/boxsnap/boxsnap/providers/providertest"
)

const install = "in7dockerinstal"

// TestMain runs the tests on one private dockerd (and, for the tests that
// need one, PostgreSQL), or, when a test starts this binary as a worker
// process, a boxsnap worker the test kills (or a taker, freeze_test.go).
func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) != "" {
		os.Exit(runWorkerProcess())
	}
	if os.Getenv(takerEnv) != "" {
		os.Exit(runTakerProcess())
	}
	os.Exit(dockertest.Main(runner(func() int { return dbtest.Main(m) })))
}

// runner runs the tests inside dbtest.Main, so that both the daemon and the
// PostgreSQL cluster stop after them.
type runner func() int

func (r runner) Run() int { return r() }

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// newBackend gives a backend on the test binary's daemon, with a state
// folder of its own as boxsnap gives it.
func newBackend(t testing.TB, mod ...func(*docker.Config)) *docker.Backend {
	t.Helper()
	host := dockertest.Host(t)
	dockertest.Image(t, host)
	cfg := docker.Config{ID: "docker", Host: host, Install: install, Network: "none", CopierBinary: dockertest.Busybox, StateDir: t.TempDir()}
	for _, f := range mod {
		f(&cfg)
	}
	b, err := docker.New(cfg)
	must(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// newGuest makes and starts a box of the test image.
func newGuest(t testing.TB, b *docker.Backend, id string) providers.Guest {
	t.Helper()
	ctx := context.Background()
	g, err := b.Acquire(ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: id, Name: id, Kind: docker.KindLinux, Install: install},
		Template: dockertest.TestImage})
	must(t, err)
	t.Cleanup(func() { _ = b.Release(context.WithoutCancel(ctx), g) })
	must(t, b.Start(ctx, g))
	return g
}

// writeFile writes a file in the box's container at path (the volume's
// path for its volume).
func writeFile(t testing.TB, b *docker.Backend, g providers.Guest, path, content string) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	name := path[strings.LastIndex(path, "/")+1:]
	must(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content))}))
	_, _ = tw.Write([]byte(content))
	must(t, tw.Close())
	dir := path[:strings.LastIndex(path, "/")+1]
	_, err := b.Client().CopyToContainer(context.Background(), g.Ref, client.CopyToContainerOptions{DestinationPath: dir, Content: &buf})
	must(t, err)
}

// readFile reads a file in the box's container, or "" when it has none.
func readFile(t testing.TB, b *docker.Backend, g providers.Guest, path string) string {
	t.Helper()
	res, err := b.Client().CopyFromContainer(context.Background(), g.Ref, client.CopyFromContainerOptions{SourcePath: path})
	if err != nil {
		if strings.Contains(err.Error(), "No such container:path") || strings.Contains(err.Error(), "Could not find the file") {
			return ""
		}
		t.Fatalf("read %s in %s: %v", path, g.Ref, err)
	}
	defer func() { _ = res.Content.Close() }()
	tr := tar.NewReader(res.Content)
	if _, err := tr.Next(); err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(tr)
	must(t, err)
	return string(out)
}

const (
	layerFile  = "/state.txt"
	volumeFile = docker.DefaultVolumePath + "/state.txt"
)

// writeState writes the state in the container's layer and in its volume.
func writeState(t testing.TB, b *docker.Backend, g providers.Guest, state string) {
	t.Helper()
	writeFile(t, b, g, layerFile, state)
	writeFile(t, b, g, volumeFile, state)
}

// readState reads both and fails when they differ.
func readState(t testing.TB, b *docker.Backend, g providers.Guest) string {
	t.Helper()
	layer, vol := readFile(t, b, g, layerFile), readFile(t, b, g, volumeFile)
	if layer != vol {
		t.Fatalf("the container's layer holds %q and its volume %q", layer, vol)
	}
	return layer
}

func harness() providertest.Harness {
	return providertest.Harness{
		Kind:    docker.KindLinux,
		Install: install,
		New: func(t *testing.T) (providers.Backend, providers.Boxes) {
			b := newBackend(t)
			return b, b
		},
		NewGuest: func(t *testing.T, b providers.Backend, _ providers.Boxes, id string) providers.Guest {
			g := newGuest(t, b.(*docker.Backend), id)
			writeState(t, b.(*docker.Backend), g, "fresh")
			return g
		},
		WriteState: func(t *testing.T, b providers.Backend, g providers.Guest, state string) {
			writeState(t, b.(*docker.Backend), g, state)
		},
		ReadState: func(t *testing.T, b providers.Backend, g providers.Guest) string {
			return readState(t, b.(*docker.Backend), g)
		},
		Unreachable: func(t *testing.T) providers.Backend {
			b, err := docker.New(docker.Config{ID: "docker", Host: "unix://" + t.TempDir() + "/none.sock", Install: install})
			must(t, err)
			return b
		},
	}
}

// mustDay is the end of a UTC day, as keep dates are.
func mustDay(t testing.TB, day string) time.Time {
	t.Helper()
	d, err := time.Parse("2006-01-02", day)
	must(t, err)
	return d.Add(24*time.Hour - time.Second)
}

// hostID waits for the identity reset to write the box's host ID, and
// reads it.
func hostID(t testing.TB, b *docker.Backend, g providers.Guest) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if id := readFile(t, b, g, "/var/lib/boxsnap/host-id"); id != "" {
			return id
		}
		if time.Now().After(deadline) {
			t.Fatalf("the identity reset never wrote %s's host ID", g.Ref)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
