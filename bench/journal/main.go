// Command journal measures the local backend's change journal on one box: the
// check of an unchanged box, an incremental take after 1% of the files
// changed, journal-driven and walk-driven, beside rsync -a
// --link-dest and restic backup on the same tree in the same run, and a
// restore to the snapshot taken before such a change, journal-driven and
// walk-driven. The tree is -files files totalling -bytes of deterministic
// pseudo-random content (the box is 100,000 files, 2 GiB).
// bench/journal/run.sh installs the tools, builds and runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"github.com/boxsnap/boxsnap/bench/benchtree"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local"
)

const (
	boxID      = "bench"
	resticPass = "bench-only" // a throwaway repository's password
)

func main() {
	work := flag.String("dir", "/tmp/boxsnap-bench-journal", "work folder (its contents are deleted)")
	runs := flag.Int("runs", 3, "runs; each figure is the median")
	files := flag.Int("files", 20000, "files in the tree (the issue's box: 100000)")
	bytes := flag.Int64("bytes", 256<<20, "bytes in the tree (the issue's box: 2147483648)")
	checks := flag.Int("checks", 500, "unchanged checks per run")
	withSync := flag.Bool("sync", false, "end every timed step with a sync, and takes with their syncfs (on a machine shared with other writers a sync also waits for theirs)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.BoolVar(&checkOnly, "check-only", false, "measure the unchanged check only (no takes beside rsync and restic, no restores)")
	flag.Parse()
	syncing = *withSync
	if *cpuProfile != "" {
		pf, err := os.Create(*cpuProfile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(pf); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(*work, *runs, *files, *bytes, *checks, !*withSync); err != nil {
		pprof.StopCPUProfile()
		log.Fatal(err)
	}
}

// checkOnly stops each run after the unchanged check.
var checkOnly bool

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

func run(work string, runs, nFiles int, nBytes int64, checks int, noSync bool) error {
	ctx := context.Background()
	_ = local.UnmountAll(work) // each box is a file system of its own, as root
	if err := os.RemoveAll(work); err != nil {
		return err
	}
	root := filepath.Join(work, "store")
	// Two backends on one store: j keeps the box's change journal, w walks.
	j, err := local.New(local.Config{Root: root, Install: "bench", NoSync: noSync})
	if err != nil {
		return err
	}
	defer j.Close(ctx)
	w, err := local.New(local.Config{Root: root, Install: "bench", NoSync: noSync, NoJournal: true})
	if err != nil {
		return err
	}
	tree := filepath.Join(root, "boxes", boxID)
	fmt.Printf("building the tree: %d files, %d bytes, in %s\n", nFiles, nBytes, tree)
	t0 := time.Now()
	paths, err := buildTree(tree, nFiles, nBytes)
	if err != nil {
		return err
	}
	fmt.Printf("built in %.1f s\n", time.Since(t0).Seconds())
	g, err := j.Acquire(ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: boxID, Kind: "linux"}, Adopt: boxID})
	if err != nil {
		return err
	}
	t0 = time.Now()
	if err := j.Start(ctx, g); err != nil { // starts the journal: a watch on every folder
		return err
	}
	fmt.Printf("journal started (every folder watched) in %.2f s\n", time.Since(t0).Seconds())
	b := &journalBench{ctx: ctx, j: j, w: w, g: g, work: work, tree: tree, paths: paths, seed: 1, f: figures{}}
	if _, err := b.take(j); err != nil { // the journal's base
		return err
	}
	for r := 1; r <= runs; r++ {
		fmt.Printf("run %d of %d\n", r, runs)
		if err := b.timeChecks(checks); err != nil {
			return err
		}
		if checkOnly {
			continue
		}
		before, err := b.timeTakes()
		if err != nil {
			return err
		}
		if err := b.timeRestores(before); err != nil {
			return err
		}
	}
	printFigures(b.f, runs, nFiles, nBytes)
	return nil
}

// journalBench is one box on two backends over one store: j keeps the
// box's change journal, w walks; f holds each run's figures.
type journalBench struct {
	ctx        context.Context
	j, w       *local.Backend
	g          providers.Guest
	work, tree string
	paths      []string
	seed       uint64
	f          figures
}

// take takes a snapshot of the box on be.
func (b *journalBench) take(be *local.Backend) (providers.SnapshotRef, error) {
	t, err := be.Snapshot(b.ctx, b.g, providers.SnapshotTake{Label: providers.Label{Box: boxID}}, nil)
	return providers.SnapshotRef{ID: t.Ref, Ref: t.Ref, Guest: b.g}, err
}

// churn changes 1% of the box's files, differently each time.
func (b *journalBench) churn() error {
	b.seed++
	_, err := benchtree.Churn(b.tree, b.paths, b.seed)
	return err
}

// timeChecks times the check of an unchanged box, journal-driven and
// walk-driven, and the automatic check's Changes.
func (b *journalBench) timeChecks(checks int) error {
	var cpu0, cpu1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &cpu0)
	var walls []float64
	for i := 0; i < checks; i++ {
		t := time.Now()
		ch, err := b.j.ChangedSinceTake(b.ctx, b.g)
		walls = append(walls, time.Since(t).Seconds())
		if err != nil {
			return err
		}
		if ch.Changed || ch.Walked {
			return fmt.Errorf("an unchanged box's check said %+v", ch)
		}
	}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &cpu1)
	sort.Float64s(walls)
	b.f.add("check_wall", walls[len(walls)/2])
	b.f.add("check_cpu", (tv(cpu1.Utime)+tv(cpu1.Stime)-tv(cpu0.Utime)-tv(cpu0.Stime))/float64(checks))
	b.f.add("check_walk", timedNoSync(func() error {
		ch, err := b.w.ChangedSinceTake(b.ctx, b.g)
		if err == nil && (ch.Changed || !ch.Walked) {
			err = fmt.Errorf("the walking check said %+v", ch)
		}
		return err
	}))
	// The automatic check's own question (Changes): whether the box
	// runs, and the journal's answer.
	walls = walls[:0]
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &cpu0)
	for i := 0; i < checks; i++ {
		t := time.Now()
		ch, err := b.j.Changes(b.ctx, b.g)
		walls = append(walls, time.Since(t).Seconds())
		if err != nil {
			return err
		}
		if ch.Changed != providers.ChangedNo || ch.Walked || !ch.Running {
			return fmt.Errorf("an unchanged running box's Changes said %+v", ch)
		}
	}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &cpu1)
	sort.Float64s(walls)
	b.f.add("changes_wall", walls[len(walls)/2])
	b.f.add("changes_cpu", (tv(cpu1.Utime)+tv(cpu1.Stime)-tv(cpu0.Utime)-tv(cpu0.Stime))/float64(checks))
	return nil
}

// timeTakes times incremental takes after 1% changed, journal-driven and
// walk-driven, beside rsync and restic, and answers the snapshot taken
// before the change, which the restores go back to.
func (b *journalBench) timeTakes() (providers.SnapshotRef, error) {
	rs1, rs2 := filepath.Join(b.work, "rsync1"), filepath.Join(b.work, "rsync2")
	repo := filepath.Join(b.work, "restic")
	if err := sh("rsync", "-a", b.tree+"/", rs1+"/"); err != nil {
		return providers.SnapshotRef{}, err
	}
	renv := []string{"RESTIC_PASSWORD=" + resticPass}
	if err := shEnv(renv, "restic", "init", "--quiet", "--repo", repo); err != nil {
		return providers.SnapshotRef{}, err
	}
	if err := shEnv(renv, "restic", "backup", "--quiet", "--repo", repo, b.tree); err != nil {
		return providers.SnapshotRef{}, err
	}
	before, err := b.take(b.j) // the snapshot before the change, for the restores
	if err != nil {
		return providers.SnapshotRef{}, err
	}
	if err := b.churn(); err != nil {
		return providers.SnapshotRef{}, err
	}
	cpuOf(b.f, "rsync_incr", (func() error { return sh("rsync", "-a", "--link-dest="+rs1, b.tree+"/", rs2+"/") }))
	cpuOf(b.f, "restic_incr", (func() error { return shEnv(renv, "restic", "backup", "--quiet", "--repo", repo, b.tree) }))
	cpuOf(b.f, "take_journal", (func() error { _, err := b.take(b.j); return err }))
	_ = os.RemoveAll(rs1)
	_ = os.RemoveAll(rs2)
	_ = os.RemoveAll(repo)
	if err := b.churn(); err != nil {
		return providers.SnapshotRef{}, err
	}
	cpuOf(b.f, "take_walk", (func() error { _, err := b.take(b.w); return err }))
	if _, err := b.take(b.j); err != nil { // j's journal has a base again (this take walks)
		return providers.SnapshotRef{}, err
	}
	return before, nil
}

// timeRestores times restores to before, 1% away after an undo take, as
// the core runs them, journal-driven and walk-driven.
func (b *journalBench) timeRestores(before providers.SnapshotRef) error {
	if err := b.churn(); err != nil {
		return err
	}
	if _, err := b.take(b.j); err != nil {
		return err
	}
	cpuOf(b.f, "restore_journal", (func() error {
		_, err := b.j.RestoreSnapshot(b.ctx, b.g, before, providers.StepRollback, nil)
		return err
	}))
	if err := b.churn(); err != nil {
		return err
	}
	if _, err := b.take(b.w); err != nil {
		return err
	}
	cpuOf(b.f, "restore_walk", (func() error {
		_, err := b.w.RestoreSnapshot(b.ctx, b.g, before, providers.StepRollback, nil)
		return err
	}))
	if _, err := b.take(b.j); err != nil {
		return err
	}
	if err := deleteAllBut(b.ctx, b.j, b.g); err != nil {
		return err
	}
	return nil
}

// printFigures prints each figure's median of the runs and their ratios.
func printFigures(f figures, runs, nFiles int, nBytes int64) {
	fmt.Println()
	how := "no step syncs (-sync to end each on disk)"
	if syncing {
		how = "every timed step ends with a sync"
	}
	fmt.Printf("Figures: %d files, %d bytes; medians of %d runs; page cache warm; %s\n", nFiles, nBytes, runs, how)
	ms := func(k string) float64 { return f.median(k) * 1000 }
	fmt.Printf("  unchanged check, journal: wall %8.3f ms, CPU %8.3f ms  (aim < 5 ms)\n", ms("check_wall"), ms("check_cpu"))
	fmt.Printf("  the automatic check's Changes (runs? changed?), journal: wall %8.3f ms, CPU %8.3f ms  (aim < 5 ms)\n", ms("changes_wall"), ms("changes_cpu"))
	fmt.Printf("  unchanged check, walk:    wall %8.1f ms\n", ms("check_walk"))
	if checkOnly {
		return
	}
	rows := []struct{ name, key string }{
		{"take after 1% changed, journal-driven", "take_journal"},
		{"take after 1% changed, walk-driven", "take_walk"},
		{"rsync -a --link-dest, 1% changed", "rsync_incr"},
		{"restic backup, 1% changed", "restic_incr"},
		{"restore 1% away, journal-driven", "restore_journal"},
		{"restore 1% away, walk-driven", "restore_walk"},
	}
	fmt.Printf("  %-42s %9s   %9s\n", "", "wall", "CPU")
	for _, row := range rows {
		fmt.Printf("  %-42s %9.3f s %9.3f s\n", row.name, f.median(row.key), f.median(row.key+"_cpu"))
	}
	fmt.Println("Ratios:")
	fmt.Printf("  walk check / journal check                 %8.0f\n", f.median("check_walk")/f.median("check_wall"))
	fmt.Printf("  rsync / journal-driven take                %8.1f   (aim >= 20)\n", f.median("rsync_incr")/f.median("take_journal"))
	fmt.Printf("  restic / journal-driven take               %8.1f\n", f.median("restic_incr")/f.median("take_journal"))
	fmt.Printf("  walk-driven / journal-driven take          %8.1f   (CPU %.1f)\n", f.median("take_walk")/f.median("take_journal"), f.median("take_walk_cpu")/f.median("take_journal_cpu"))
	fmt.Printf("  rsync / journal-driven take, CPU           %8.1f\n", f.median("rsync_incr_cpu")/f.median("take_journal_cpu"))
	fmt.Printf("  walk-driven / journal-driven restore       %8.1f   (CPU %.1f; journal-driven aim < 0.5 s)\n", f.median("restore_walk")/f.median("restore_journal"), f.median("restore_walk_cpu")/f.median("restore_journal_cpu"))
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

// deleteAllBut deletes every snapshot but the box's last take.
func deleteAllBut(ctx context.Context, b *local.Backend, g providers.Guest) error {
	held, err := b.HeldSnapshots(ctx)
	if err != nil {
		return err
	}
	sort.Slice(held, func(i, k int) bool { return held[i].TakenAt.Before(held[k].TakenAt) })
	for _, h := range held[:max(0, len(held)-1)] {
		if err := b.DeleteSnapshot(ctx, h.Ref, nil); err != nil {
			return err
		}
	}
	return nil
}

// syncing is -sync: timed steps end on disk.
var syncing bool

// timed measures fn; with -sync, until what it wrote is on disk, after an
// untimed sync, as bench/local does, so no tool pays for the one before it.
func timed(fn func() error) float64 {
	if syncing {
		syscall.Sync()
	}
	t := time.Now()
	if err := fn(); err != nil {
		log.Fatal(err)
	}
	if syncing {
		syscall.Sync()
	}
	return time.Since(t).Seconds()
}

// cpuOf is the CPU time (user and system) this process and its waited-for
// children spent in fn, with fn's wall time added to f under key.
func cpuOf(f figures, key string, fn func() error) {
	var s0, c0, s1, c1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &s0)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &c0)
	f.add(key, timed(fn))
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &s1)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &c1)
	cpu := func(r syscall.Rusage) float64 { return tv(r.Utime) + tv(r.Stime) }
	f.add(key+"_cpu", cpu(s1)-cpu(s0)+cpu(c1)-cpu(c0))
}

func timedNoSync(fn func() error) float64 {
	t := time.Now()
	if err := fn(); err != nil {
		log.Fatal(err)
	}
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

// buildTree writes the tree: sizes log-uniform, scaled to nBytes in all, 100
// files a folder, in folders two deep.
func buildTree(dir string, nFiles int, nBytes int64) ([]string, error) {
	rng := rand.New(rand.NewPCG(4, 2))
	sizes := make([]float64, nFiles)
	var sum float64
	for i := range sizes {
		sizes[i] = math.Exp(math.Log(100) + rng.Float64()*(math.Log(1<<20)-math.Log(100)))
		sum += sizes[i]
	}
	scale := float64(nBytes) / sum
	folders := max(1, nFiles/100)
	var paths []string
	for i := range sizes {
		rel := filepath.Join(fmt.Sprintf("d%02d", i%folders%50), fmt.Sprintf("s%04d", i%folders), fmt.Sprintf("f%06d.dat", i))
		if err := benchtree.WriteRandom(filepath.Join(dir, rel), int64(sizes[i]*scale), uint64(i)); err != nil {
			return nil, err
		}
		paths = append(paths, rel)
	}
	return paths, nil
}
