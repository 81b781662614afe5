// Command dockerexport measures the Docker backend's export of a box's
// snapshot, on one private dockerd: a box holding -size MiB of random bytes
// in its container's layer and -size MiB in its volume, a snapshot, 1% of
// the box written anew (a file of -size/100 MiB in each), a second
// snapshot, and then the second exported whole and against the first (the
// incremental archive a receiver holding the first imports), beside
// `docker save` of its image through `gzip -1` by hand. Sizes in bytes,
// times of one run.
//
//	go run ./bench/dockerexport -size 512     # a 1 GiB box
//
// It needs root, dockerd (Debian's docker.io), the docker CLI and a static
// busybox (busybox-static).
package main

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/docker"
	"github.com/boxsnap/boxsnap/providers/docker/dockertest"
)

const install = "in7benchexport1"

func main() {
	size := flag.Int("size", 512, "MiB in the container's layer, and as many in its volume")
	flag.Parse()
	if err := run(*size); err != nil {
		fmt.Fprintln(os.Stderr, "dockerexport:", err)
		os.Exit(1)
	}
}

func run(size int) error {
	d, err := dockertest.Start(os.TempDir())
	if err != nil {
		return err
	}
	defer d.Stop()
	ctx := context.Background()
	if err := dockertest.Import(ctx, d.Host, dockertest.TestImage, nil); err != nil {
		return err
	}
	b, err := docker.New(docker.Config{ID: "bench", Host: d.Host, Install: install, Network: "none", CopierBinary: dockertest.Busybox})
	if err != nil {
		return err
	}
	defer func() { _ = b.Close() }()
	box := id("bx")
	g, err := b.Acquire(ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: box, Kind: docker.KindLinux, Install: install}, Template: dockertest.TestImage})
	if err != nil {
		return err
	}
	defer func() { _ = b.Release(context.WithoutCancel(ctx), g) }()
	if err := b.Start(ctx, g); err != nil {
		return err
	}
	var derr error
	dk := func(args ...string) string {
		cmd := exec.Command("docker", args...)
		cmd.Env = append(os.Environ(), "DOCKER_HOST="+d.Host)
		out, err := cmd.CombinedOutput()
		if err != nil && derr == nil {
			derr = fmt.Errorf("docker %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	fill := func(mib int, name string) error {
		for _, dir := range []string{"/srv", docker.DefaultVolumePath} {
			dk("exec", g.Ref, "sh", "-c", fmt.Sprintf("mkdir -p %s && dd if=/dev/urandom of=%s/%s bs=1M count=%d 2>/dev/null", dir, dir, name, mib))
		}
		return derr
	}
	take := func() (providers.SnapshotRef, error) {
		sn := id("sn")
		t, err := b.Snapshot(ctx, g, providers.SnapshotTake{Label: providers.Label{Install: install, Box: box, Snapshot: sn}}, nil)
		return providers.SnapshotRef{ID: sn, Ref: t.Ref, Guest: g}, err
	}
	if err := fill(size, "data"); err != nil {
		return err
	}
	first, err := take()
	if err != nil {
		return err
	}
	changed := max(1, size/100)
	if err := fill(changed, "changed"); err != nil {
		return err
	}
	second, err := take()
	if err != nil {
		return err
	}
	fmt.Printf("Docker export: %d MiB in the container's layer + %d MiB in its volume, then %d MiB of each written anew (%.2f%% of the box)\n",
		size, size, changed, 100*float64(changed)/float64(size))
	fmt.Printf("engine: %s\n", dk("version", "--format", "{{.Server.Version}} (API {{.Server.APIVersion}})"))
	measure := func(what string, opts providers.ExportOptions) error {
		var n countWriter
		start := time.Now()
		if err := b.ExportSnapshot(ctx, second, opts, &n); err != nil {
			return err
		}
		fmt.Printf("%-44s %12d bytes  %6.2f s\n", what, int64(n), time.Since(start).Seconds())
		return nil
	}
	if err := measure("boxsnap export, whole", providers.ExportOptions{}); err != nil {
		return err
	}
	if err := measure("boxsnap export, against the first snapshot", providers.ExportOptions{Base: &first, Parent: first.ID}); err != nil {
		return err
	}
	start := time.Now()
	cmd := exec.Command("sh", "-c", "docker save boxsnap/snapshot:"+second.Ref+" | gzip -1 | wc -c")
	cmd.Env = append(os.Environ(), "DOCKER_HOST="+d.Host)
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("docker save by hand: %w", err)
	}
	fmt.Printf("%-44s %12s bytes  %6.2f s\n", "by hand: docker save | gzip -1", strings.TrimSpace(string(out)), time.Since(start).Seconds())
	return nil
}

// countWriter counts what is written to it.
type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}

var _ io.Writer = (*countWriter)(nil)

func id(prefix string) string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = letters[int(b[i])%len(letters)]
	}
	return prefix + string(b)
}
