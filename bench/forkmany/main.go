// Command forkmany times the local backend's forks of a real tree into N
// boxes: one take, then N forks of it (a fork into N boxes in one call),
// beside N single forks (each its own take, then its fork, as box_fork of
// the box now does), from an empty store each, or with -snapshotted from
// a store that already holds a snapshot of the source box (untimed), as an
// agent's box does. -phases prints each take's and fork's time, wall and
// CPU. run.sh runs it with cp -a of the same tree N times, side by side.
// Each box is a file system of its own, as boxsnap's default, so where the
// host mounts overlays the forks of one snapshot share its files; what the
// forks hold is what the boxes' images and the shared trees grew by.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local"
)

func main() {
	tree := flag.String("tree", "", "the tree in the source box (copied in first, untimed)")
	work := flag.String("dir", "/tmp/boxsnap-forkmany", "work folder (its contents are deleted)")
	n := flag.Int("n", 10, "how many forks")
	mode := flag.String("mode", "many", "many: one take and n forks; single: n takes, each with its fork")
	phases := flag.Bool("phases", false, "print each take's and fork's time on standard error")
	before := flag.Bool("snapshotted", false, "the source box holds a snapshot of the tree before the clock starts, as an agent's box does")
	prof := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	debug := flag.Bool("debug", false, "log the backend's debug lines (each take's and shared tree's steps) on standard error")
	flag.Parse()
	if *prof != "" {
		f, err := os.Create(*prof)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	slog.SetLogLoggerLevel(slog.LevelWarn) // the backend's info lines are not the figures
	if *debug {
		slog.SetLogLoggerLevel(slog.LevelDebug)
	}
	if *tree == "" {
		log.Fatal("-tree is needed")
	}
	r, err := run(*tree, *work, *mode, *n, *phases, *before)
	if err != nil {
		log.Fatal(err)
	}
	ms := func(d time.Duration) float64 { return d.Seconds() * 1000 }
	fmt.Printf("%s_ms=%.0f %s_cpu_ms=%.0f %s_first_ms=%.0f %s_first_cpu_ms=%.0f %s_forks_kib=%d\n", *mode, ms(r.took), *mode, ms(r.cpu),
		*mode, ms(r.firstTook), *mode, ms(r.firstCPU), *mode, r.used)
}

// result is a timed part's wall time and the CPU time this process spent
// in it, the same of its first take (the one both modes make first, which
// copies what the store lacks), and what the forks hold on the host in
// KiB.
type result struct {
	took, cpu           time.Duration
	firstTook, firstCPU time.Duration
	used                int64
}

// run times one mode's part.
func run(tree, work, mode string, n int, phases, snapshotted bool) (result, error) {
	ctx := context.Background()
	_ = local.UnmountAll(work)
	if err := os.RemoveAll(work); err != nil {
		return result{}, err
	}
	defer func() { _ = local.UnmountAll(work); _ = os.RemoveAll(work) }()
	// Each box a file system of its own, as boxsnap's default: where the
	// host mounts overlays, forks of one snapshot share its files.
	store := filepath.Join(work, "store")
	b, err := local.New(local.Config{Root: store, Install: "bench", NoSync: true, DiskImages: true})
	if err != nil {
		return result{}, err
	}
	g, err := b.Acquire(ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxforksource", Kind: "linux"}})
	if err != nil {
		return result{}, err
	}
	if out, err := exec.Command("cp", "-a", tree+"/.", b.BoxDir(g)+"/tree").CombinedOutput(); err != nil {
		return result{}, fmt.Errorf("cp -a: %v: %s", err, out)
	}
	take := func() (providers.SnapshotRef, error) {
		t, err := b.Snapshot(ctx, g, providers.SnapshotTake{Label: providers.Label{Box: g.Ref}}, nil)
		return providers.SnapshotRef{ID: t.Ref, Ref: t.Ref, Guest: g}, err
	}
	if snapshotted {
		if _, err := take(); err != nil {
			return result{}, fmt.Errorf("the untimed take: %w", err)
		}
	}
	syscall.Sync()
	before, err := hostKiB(store)
	if err != nil {
		return result{}, err
	}
	// Each phase's wall time, and the CPU time this process spent in it
	// (user and system), which other work on the host moves less.
	step, stepCPU := time.Now(), cpuTime()
	phase := func(what string, i int) {
		if phases {
			fmt.Fprintf(os.Stderr, "%s %s %d: %.0f ms (cpu %.0f ms)\n", mode, what, i,
				time.Since(step).Seconds()*1000, (cpuTime()-stepCPU).Seconds()*1000)
		}
		step, stepCPU = time.Now(), cpuTime()
	}
	var forks []providers.Guest
	t0, cpu0 := time.Now(), cpuTime()
	step, stepCPU = t0, cpu0
	var ref providers.SnapshotRef
	var r result
	for i := 1; i <= n; i++ {
		if i == 1 || mode == "single" {
			if ref, err = take(); err != nil {
				return result{}, fmt.Errorf("take: %w", err)
			}
			if i == 1 {
				r.firstTook, r.firstCPU = time.Since(t0), cpuTime()-cpu0
			}
			phase("take", i)
		}
		f, err := b.ForkSnapshot(ctx, ref, providers.BoxIdentity{ID: fmt.Sprintf("bxfork%06d", i), Kind: "linux"}, nil)
		if err != nil {
			return result{}, fmt.Errorf("fork %d: %w", i, err)
		}
		forks = append(forks, f)
		phase("fork", i)
	}
	syscall.Sync() // what the forks wrote is on disk before the clock stops
	phase("sync", 0)
	r.took, r.cpu = time.Since(t0), cpuTime()-cpu0
	// What the forks hold on the host: what the boxes' images and the
	// shared trees grew by (the store's content is the takes').
	after, err := hostKiB(store)
	if err != nil {
		return result{}, err
	}
	r.used = after - before
	return r, nil
}

// cpuTime is the user and system time this process and the children it
// waited for (mkfs.ext4 of each fork's image) have spent.
func cpuTime() time.Duration {
	var t time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			t += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return t
}

// hostKiB is what the boxes' images and the shared trees of the data
// folder take on the host in KiB (du -skx: blocks counted once, each
// image's allocated blocks, no mount crossed).
func hostKiB(store string) (int64, error) {
	_ = os.MkdirAll(filepath.Join(store, "lowers"), 0o700)
	out, err := exec.Command("du", "-skxc", filepath.Join(store, "disks"), filepath.Join(store, "lowers")).Output()
	if err != nil {
		return 0, fmt.Errorf("du: %w", err)
	}
	f := strings.Fields(string(out))
	if len(f) < 2 {
		return 0, fmt.Errorf("du said %q", out)
	}
	return strconv.ParseInt(f[len(f)-2], 10, 64)
}
