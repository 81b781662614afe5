// Command bench measures the local backend side by side with what a user
// would pick instead (cp -a, rsync --link-dest, restic backup) on the same
// tree: 20,000 files totalling 1 GiB of deterministic pseudo-random content.
// bench/local/run.sh builds and runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"github.com/boxsnap/boxsnap/bench/benchtree"
	"log"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local"
)

// The benchmark's tree and churn, from the project's issue #4.
const (
	treeFiles  = 20000
	treeBytes  = 1 << 30
	snapshots  = 10 // for the disk-use figure
	boxID      = "bench"
	resticPass = "bench-only" // a throwaway repository's password
)

func main() {
	work := flag.String("dir", "/tmp/boxsnap-bench", "work folder (its contents are deleted)")
	runs := flag.Int("runs", 3, "runs; each figure is the median")
	noSync := flag.Bool("nosync", false, "skip the take's syncfs (cp -a does not sync)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	verbose := flag.Bool("v", false, "log each take's phases")
	flag.Parse()
	if *verbose {
		slog.SetLogLoggerLevel(slog.LevelDebug)
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(*work, *runs, *noSync); err != nil {
		pprof.StopCPUProfile()
		log.Fatal(err)
	}
}

type figures map[string][]float64

func (f figures) add(k string, v float64) { f[k] = append(f[k], v) }

func (f figures) median(k string) float64 {
	v := append([]float64(nil), f[k]...)
	if len(v) == 0 {
		return math.NaN()
	}
	sort.Float64s(v)
	return v[len(v)/2]
}

func run(work string, runs int, noSync bool) error {
	ctx := context.Background()
	_ = local.UnmountAll(work) // each box is a file system of its own, as root
	if err := os.RemoveAll(work); err != nil {
		return err
	}
	root := filepath.Join(work, "store")
	b, err := local.New(local.Config{Root: root, Install: "bench", NoSync: noSync})
	if err != nil {
		return err
	}
	tree := filepath.Join(root, "boxes", boxID)
	fmt.Printf("building the tree: %d files, %d bytes, in %s\n", treeFiles, treeBytes, tree)
	t0 := time.Now()
	paths, err := benchtree.Build(tree, treeBytes, treeFiles)
	if err != nil {
		return err
	}
	fmt.Printf("built in %.1f s\n", time.Since(t0).Seconds())
	g, err := b.Acquire(ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: boxID, Kind: "linux"}, Adopt: boxID})
	if err != nil {
		return err
	}
	treeDisk := duDisk(tree)
	treeApparent := duApparent(tree)
	f := figures{}
	for r := 1; r <= runs; r++ {
		fmt.Printf("run %d of %d\n", r, runs)
		if err := oneRun(ctx, b, g, work, root, tree, paths, r, f); err != nil {
			return err
		}
	}
	fmt.Println()
	fmt.Printf("Figures: medians of %d runs, seconds (page cache warm: dropping caches is not possible here)\n", runs)
	rows := []struct{ name, key string }{
		{"cp -a (full copy)", "cp"},
		{"boxsnap full take", "take_full"},
		{"rsync -a full", "rsync_full"},
		{"restic backup full", "restic_full"},
		{"boxsnap incremental take (1% changed)", "take_incr"},
		{"rsync --link-dest incremental", "rsync_incr"},
		{"restic backup incremental", "restic_incr"},
		{"boxsnap restore 1% away (rollback step)", "restore"},
		{"boxsnap undo take + rollback", "restore_with_undo"},
	}
	for _, row := range rows {
		fmt.Printf("  %-42s %8.3f\n", row.name, f.median(row.key))
	}
	fmt.Println("Ratios:")
	fmt.Printf("  full take / cp -a                          %6.2f   (aim <= 1.3)\n", f.median("take_full")/f.median("cp"))
	fmt.Printf("  restic incremental / boxsnap incremental   %6.2f   (aim >= 3)\n", f.median("restic_incr")/f.median("take_incr"))
	fmt.Printf("  rsync incremental / boxsnap incremental    %6.2f   (aim >= 3)\n", f.median("rsync_incr")/f.median("take_incr"))
	fmt.Printf("  cp -a / restore 1%% away                    %6.2f   (aim >= 10)\n", f.median("cp")/f.median("restore"))
	fmt.Printf("Disk: tree %d bytes apparent, %d on disk\n", treeApparent, treeDisk)
	fmt.Printf("  store after %d snapshots with 1%% churn each: %.0f bytes on disk, %.0f apparent\n", snapshots, f.median("store_disk"), f.median("store_apparent"))
	fmt.Printf("  store / tree on disk                       %6.3f   (aim <= 1.15)\n", f.median("store_disk")/float64(treeDisk))
	fmt.Printf("  store / tree apparent                      %6.3f\n", f.median("store_apparent")/float64(treeApparent))
	return nil
}

func oneRun(ctx context.Context, b *local.Backend, g providers.Guest, work, root, tree string, paths []string, r int, f figures) error {
	// Baseline copies of the tree, each tool once.
	cpDst := filepath.Join(work, "cp")
	f.add("cp", timed(func() error { return sh("cp", "-a", tree, cpDst) }))
	_ = os.RemoveAll(cpDst)
	rs1, rs2 := filepath.Join(work, "rsync1"), filepath.Join(work, "rsync2")
	f.add("rsync_full", timed(func() error { return sh("rsync", "-a", tree+"/", rs1+"/") }))
	repo := filepath.Join(work, "restic")
	if err := shEnv([]string{"RESTIC_PASSWORD=" + resticPass}, "restic", "init", "--quiet", "--repo", repo); err != nil {
		return err
	}
	f.add("restic_full", timed(func() error {
		return shEnv([]string{"RESTIC_PASSWORD=" + resticPass}, "restic", "backup", "--quiet", "--repo", repo, tree)
	}))

	var base providers.SnapshotRef
	f.add("take_full", timed(func() error {
		t, err := b.Snapshot(ctx, g, providers.SnapshotTake{Label: providers.Label{Box: boxID}}, nil)
		base = providers.SnapshotRef{ID: t.Ref, Ref: t.Ref, Guest: g}
		return err
	}))

	// 1% of the files change; each tool runs again.
	if _, err := benchtree.Churn(tree, paths, uint64(r*1000+1)); err != nil {
		return err
	}
	f.add("rsync_incr", timed(func() error { return sh("rsync", "-a", "--link-dest="+rs1, tree+"/", rs2+"/") }))
	f.add("restic_incr", timed(func() error {
		return shEnv([]string{"RESTIC_PASSWORD=" + resticPass}, "restic", "backup", "--quiet", "--repo", repo, tree)
	}))
	f.add("take_incr", timed(func() error {
		_, err := b.Snapshot(ctx, g, providers.SnapshotTake{Label: providers.Label{Box: boxID}}, nil)
		return err
	}))
	_ = os.RemoveAll(rs1)
	_ = os.RemoveAll(rs2)
	_ = os.RemoveAll(repo)

	// Restore to the full take, 1% away: the undo take, then the rollback.
	if _, err := benchtree.Churn(tree, paths, uint64(r*1000+2)); err != nil {
		return err
	}
	var undoT, rollT float64
	undoT = timed(func() error {
		_, err := b.Snapshot(ctx, g, providers.SnapshotTake{Label: providers.Label{Box: boxID}}, nil)
		return err
	})
	rollT = timed(func() error {
		_, err := b.RestoreSnapshot(ctx, g, base, providers.StepRollback, nil)
		return err
	})
	f.add("restore", rollT)
	f.add("restore_with_undo", undoT+rollT)

	// Disk use of 10 snapshots with 1% churn each, from an empty store.
	if err := deleteAll(ctx, b, base); err != nil {
		return err
	}
	var first providers.SnapshotRef
	for i := 0; i < snapshots; i++ {
		if i > 0 {
			if _, err := benchtree.Churn(tree, paths, uint64(r*1000+10+i)); err != nil {
				return err
			}
		}
		t, err := b.Snapshot(ctx, g, providers.SnapshotTake{Label: providers.Label{Box: boxID}}, nil)
		if err != nil {
			return err
		}
		if i == 0 {
			first = providers.SnapshotRef{ID: t.Ref, Ref: t.Ref, Guest: g}
		}
	}
	store := []string{filepath.Join(root, "content"), filepath.Join(root, "snapshots")}
	f.add("store_disk", float64(duDisk(store...)))
	f.add("store_apparent", float64(duApparent(store...)))
	// Back to the run's starting tree, then an empty store for the next run.
	if _, err := b.RestoreSnapshot(ctx, g, first, providers.StepRollback, nil); err != nil {
		return err
	}
	return deleteAll(ctx, b, providers.SnapshotRef{})
}

// deleteAll deletes every snapshot but keep.
func deleteAll(ctx context.Context, b *local.Backend, keep providers.SnapshotRef) error {
	held, err := b.HeldSnapshots(ctx)
	if err != nil {
		return err
	}
	for _, h := range held {
		if h.Ref.Ref == keep.Ref && keep.Ref != "" {
			continue
		}
		if err := b.DeleteSnapshot(ctx, h.Ref, nil); err != nil {
			return err
		}
	}
	return nil
}

// timed measures fn until what it wrote is on disk: after an untimed sync,
// so that no tool pays for the write-back of the one before it, and with a
// timed sync at its end, so that a tool that leaves its writes in the page
// cache (cp, rsync, restic) pays for them as boxsnap's take (one syncfs)
// does. Without the second sync, cp -a measured 1.5 s or 6.5 s on the same
// tree, depending on when the kernel wrote back.
func timed(fn func() error) float64 {
	syscall.Sync()
	t := time.Now()
	if err := fn(); err != nil {
		log.Fatal(err)
	}
	syscall.Sync()
	return time.Since(t).Seconds()
}

func sh(name string, args ...string) error { return shEnv(nil, name, args...) }

func shEnv(env []string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}

func duOut(args ...string) int64 {
	out, err := exec.Command("du", args...).Output()
	if err != nil {
		log.Fatalf("du: %v", err)
	}
	var total int64
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 0 {
			n, _ := strconv.ParseInt(fields[0], 10, 64)
			total += n
		}
	}
	return total
}

func duDisk(paths ...string) int64 {
	return duOut(append([]string{"-s", "--block-size=1"}, paths...)...)
}

func duApparent(paths ...string) int64 {
	return duOut(append([]string{"-s", "-b"}, paths...)...)
}
