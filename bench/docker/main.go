// Command docker measures the Docker backend against the same work done by
// hand with the docker CLI, in one run on one private dockerd: a take of a
// box holding -size MiB in its container's layer and -size MiB in its volume,
// a take after 1% of each changed, and a restore; with the pause's length of
// each take, and of the restore's undo (a take of a box unchanged since the
// take before it); and the check of a box idle since its take (Changes).
// By hand is what a person would type: docker pause, docker commit, a
// volume copy with docker run --rm -v … cp -a, docker unpause; and for a
// restore docker stop, a volume copy, docker create, start, rename and rm.
// Medians of -runs.
//
//	go run ./bench/docker -size 64 -runs 3        # quick
//	go run ./bench/docker -size 1024 -runs 3      # the 1 GiB + 1 GiB
//
// It needs root, dockerd (Debian's docker.io), the docker CLI and a static
// busybox (busybox-static).
package main

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/docker"
	"github.com/boxsnap/boxsnap/providers/docker/dockertest"
)

type sample struct{ total, pause time.Duration }

func main() {
	size := flag.Int("size", 64, "MiB in the container's layer, and as many in its volume")
	runs := flag.Int("runs", 3, "runs of each measure")
	steps := flag.Bool("steps", false, "print how long each step of each take took (the backend's debug lines)")
	flag.Parse()
	d, err := dockertest.Start(os.TempDir())
	if err != nil {
		fail(err)
	}
	defer d.Stop()
	ctx := context.Background()
	if err := dockertest.Import(ctx, d.Host, dockertest.TestImage, nil); err != nil {
		fail(err)
	}
	logger := slog.New(slog.DiscardHandler)
	if *steps {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	// A state folder, as boxsnap gives the backend: the records of the
	// takes, their layers' files and the records of their pauses.
	state, err := os.MkdirTemp("", "bsbench-state-")
	if err != nil {
		fail(err)
	}
	defer func() { _ = os.RemoveAll(state) }()
	b, err := docker.New(docker.Config{ID: "bench", Host: d.Host, Install: "in7benchinstal1", Network: "none", CopierBinary: dockertest.Busybox, Logger: logger,
		StateDir: state})
	if err != nil {
		fail(err)
	}
	dk := func(args ...string) string {
		cmd := exec.Command("docker", args...)
		cmd.Env = append(os.Environ(), "DOCKER_HOST="+d.Host)
		out, err := cmd.CombinedOutput()
		if err != nil {
			fail(fmt.Errorf("docker %s: %v: %s", strings.Join(args, " "), err, out))
		}
		return strings.TrimSpace(string(out))
	}
	fmt.Printf("Docker backend beside the docker CLI by hand: %d MiB in the container's layer + %d MiB in its volume, %d runs each, medians\n", *size, *size, *runs)
	fmt.Printf("engine: %s\n", dk("version", "--format", "{{.Server.Version}} (API {{.Server.APIVersion}})"))

	var r results
	for run := 0; run < *runs; run++ {
		r.run(ctx, b, dk, *size, run)
	}
	r.print()
}

// results are each measure's samples, every run's.
type results struct{ full, fullHand, incr, incrHand, rest, restHand, undo, check []sample }

// run is one run of every measure on a new box of size MiB in its layer
// and as many in its volume: the takes beside by hand, the idle check,
// and a restore beside by hand.
func (r *results) run(ctx context.Context, b *docker.Backend, dk func(...string) string, size, run int) {
	box := id("bx")
	g, err := b.Acquire(ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: box, Kind: docker.KindLinux, Install: "in7benchinstal1"}, Template: dockertest.TestImage})
	if err != nil {
		fail(err)
	}
	fill := func(mib int, name string) {
		for _, dir := range []string{"/srv", docker.DefaultVolumePath} {
			dk("exec", g.Ref, "sh", "-c", fmt.Sprintf("mkdir -p %s && dd if=/dev/urandom of=%s/%s bs=1M count=%d 2>/dev/null", dir, dir, name, mib))
		}
	}
	fill(size, "data")
	take := func() (providers.SnapshotRef, sample) {
		sn := id("sn")
		start := time.Now()
		t, err := b.Snapshot(ctx, g, providers.SnapshotTake{Label: providers.Label{Install: "in7benchinstal1", Box: box, Snapshot: sn}}, nil)
		if err != nil {
			fail(err)
		}
		return providers.SnapshotRef{ID: sn, Ref: t.Ref, Guest: g}, sample{time.Since(start), t.Paused}
	}
	byHand := func() sample {
		vol := "hand-" + id("v")
		start := time.Now()
		dk("pause", g.Ref)
		p0 := time.Now()
		dk("commit", "--pause=false", g.Ref, "hand/"+vol)
		dk("volume", "create", vol)
		dk("run", "--rm", "--network", "none", "-v", volumeOf(dk, g.Ref)+":/from:ro", "-v", vol+":/to", "boxsnap/copier:1", "/bin/busybox", "cp", "-a", "/from/.", "/to/")
		dk("unpause", g.Ref)
		return sample{time.Since(start), time.Since(p0)}
	}
	// The first take makes the copier image; it is not measured.
	if run == 0 {
		take()
	}
	// Which goes first alternates by run, so that neither always finds
	// the other's reads in the page cache.
	pair := func(into, hand *[]sample) providers.SnapshotRef {
		var ref providers.SnapshotRef
		var s sample
		if run%2 == 1 {
			*hand = append(*hand, byHand())
			ref, s = take()
		} else {
			ref, s = take()
			*hand = append(*hand, byHand())
		}
		*into = append(*into, s)
		return ref
	}
	first := pair(&r.full, &r.fullHand)
	fill(max(1, size/100), "changed")
	pair(&r.incr, &r.incrHand)
	// The automatic history's check of the box, idle since its take.
	for range 5 {
		start := time.Now()
		ch, err := b.Changes(ctx, g)
		if err != nil {
			fail(err)
		}
		if ch.Changed != providers.ChangedNo {
			fail(fmt.Errorf("the check of a box idle since its take answered %+v", ch))
		}
		r.check = append(r.check, sample{total: time.Since(start)})
	}

	// A restore to the first snapshot: boxsnap's steps (its undo, a take
	// of the running box, measured apart), and the same by hand.
	plan, err := b.PlanSnapshots(ctx, g, &first)
	if err != nil {
		fail(err)
	}
	var steps time.Duration
	for _, step := range plan.Restore.Order {
		if step == providers.StepUndo {
			_, u := take()
			r.undo = append(r.undo, u)
			continue
		}
		start := time.Now()
		if _, err := b.RestoreSnapshot(ctx, g, first, step, nil); err != nil {
			fail(err)
		}
		steps += time.Since(start)
	}
	r.rest = append(r.rest, sample{total: steps})
	r.restHand = append(r.restHand, restoreByHand(dk, g.Ref, "boxsnap/snapshot:"+first.Ref, "boxsnap-"+first.Ref))
	if err := b.Release(ctx, g); err != nil {
		fail(err)
	}
	// Each run's snapshots and copies go, so that a full-size run fits.
	dk("image", "prune", "-af", "--filter", "label=boxsnap.install")
	dk("volume", "prune", "-f")
}

// print prints each measure's medians and ratios.
func (r *results) print() {
	row := func(what string, s, h []sample, pause bool) {
		ms, mh := median(s, false), median(h, false)
		fmt.Printf("%-34s boxsnap %8s   by hand %8s   ratio %.2f", what, ms.Round(time.Millisecond), mh.Round(time.Millisecond), float64(ms)/float64(mh))
		if pause {
			fmt.Printf("   pause: boxsnap %s, by hand %s", median(s, true).Round(time.Millisecond), median(h, true).Round(time.Millisecond))
		}
		fmt.Println()
	}
	row("take", r.full, r.fullHand, true)
	row("take after 1% changed", r.incr, r.incrHand, true)
	row("restore (stop … start, no undo)", r.rest, r.restHand, false)
	fmt.Printf("%-34s boxsnap %8s   pause %s   (a take of the running box, unchanged since the take before it; by hand has none)\n", "the restore's undo",
		median(r.undo, false).Round(time.Millisecond), median(r.undo, true).Round(time.Millisecond))
	fmt.Printf("%-34s boxsnap %8s   (Changes of a box idle since its take, which the automatic history asks every 15 s)\n", "the check of an idle box",
		median(r.check, false).Round(time.Millisecond))
}

// restoreByHand is a swap as a person would type it.
func restoreByHand(dk func(...string) string, name, image, snapVol string) sample {
	vol := "hand-" + id("v")
	oldVol := volumeOf(dk, name)
	start := time.Now()
	dk("stop", "-t", "1", name)
	dk("volume", "create", vol)
	dk("run", "--rm", "--network", "none", "-v", snapVol+":/from:ro", "-v", vol+":/to", "boxsnap/copier:1", "/bin/busybox", "cp", "-a", "/from/.", "/to/")
	dk("create", "--name", name+"-hand", "--network", "none", "-v", vol+":"+docker.DefaultVolumePath, image)
	dk("start", name+"-hand")
	dk("rename", name, name+"-old")
	dk("rename", name+"-hand", name)
	dk("rm", "-f", name+"-old")
	if oldVol != "" {
		dk("volume", "rm", oldVol) // as boxsnap deletes the old container's volume
	}
	return sample{total: time.Since(start)}
}

func volumeOf(dk func(...string) string, name string) string {
	return dk("inspect", "--format", `{{index .Config.Labels "boxsnap.volume"}}`, name)
}

func median(s []sample, pause bool) time.Duration {
	var v []time.Duration
	for _, x := range s {
		if pause {
			v = append(v, x.pause)
		} else {
			v = append(v, x.total)
		}
	}
	slices.Sort(v)
	if len(v) == 0 {
		return 0
	}
	return v[len(v)/2]
}

func id(prefix string) string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	var p [12]byte
	_, _ = rand.Read(p[:])
	out := []byte(prefix)
	for _, c := range p {
		out = append(out, letters[int(c)%len(letters)])
	}
	return string(out)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench/docker:", err)
	os.Exit(1)
}
