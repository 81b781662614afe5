// Command compare measures "Compare with now" beside diff -rq and rsync -an
// --delete --itemize-changes on the same trees: a 100,000-file box (1 KiB to
// 4 KiB a file) of which 1% changed after its snapshot (half of those keep
// their size, so only their content tells; a few files added and removed).
// boxsnap's figure is the time to the first page of the list: the local
// backend's CompareFiles in a fresh backend (no manifest cached), then the
// first 200 changes. diff and rsync compare the box with a plain copy of it
// made with cp -a just before the snapshot. bench/compare/run.sh builds and
// runs it.
package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"log"
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
	treeFiles = 100000
	folders   = 400 // 250 files a folder
	boxID     = "bench"
	pageSize  = 200
)

func main() {
	work := flag.String("dir", "/tmp/boxsnap-bench-compare", "work folder (its contents are deleted)")
	runs := flag.Int("runs", 5, "runs; each figure is the median")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of boxsnap's comparisons to this file")
	workers := flag.Int("workers", 0, "the local backend's workers (0: its default)")
	flag.Parse()
	if err := run(*work, *runs, *cpuProfile, *workers); err != nil {
		log.Fatal(err)
	}
}

func run(work string, runs int, cpuProfile string, workers int) error {
	ctx := context.Background()
	_ = local.UnmountAll(work) // each box is a file system of its own, as root
	if err := os.RemoveAll(work); err != nil {
		return err
	}
	root := filepath.Join(work, "store")
	b, err := local.New(local.Config{Root: root, Install: "bench", NoSync: true})
	if err != nil {
		return err
	}
	tree := filepath.Join(root, "boxes", boxID)
	fmt.Printf("building the box: %d files in %d folders, in %s\n", treeFiles, folders, tree)
	t0 := time.Now()
	paths, err := buildTree(tree)
	if err != nil {
		return err
	}
	fmt.Printf("built in %.1f s\n", time.Since(t0).Seconds())
	g, err := b.Acquire(ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: boxID, Kind: "linux"}, Adopt: boxID})
	if err != nil {
		return err
	}
	// The same tree as a plain folder, for diff and rsync: what the snapshot
	// holds.
	then := filepath.Join(work, "then")
	if out, err := exec.Command("cp", "-a", tree, then).CombinedOutput(); err != nil {
		return fmt.Errorf("cp -a: %v: %s", err, out)
	}
	t0 = time.Now()
	taken, err := b.Snapshot(ctx, g, providers.SnapshotTake{Label: providers.Label{Box: boxID}}, nil)
	if err != nil {
		return err
	}
	fmt.Printf("snapshot taken in %.1f s\n", time.Since(t0).Seconds())
	want, err := churn(tree, paths)
	if err != nil {
		return err
	}
	fmt.Printf("changed %d paths (1%% of the files changed, half of them keeping their size; 20 added, 20 removed)\n", want)

	ref := providers.SnapshotRef{ID: taken.Ref, Ref: taken.Ref, Guest: g}
	var fig = map[string][]float64{}
	for r := 1; r <= runs; r++ {
		// boxsnap: a fresh backend, so the manifest is read again.
		fresh, err := local.New(local.Config{Root: root, Install: "bench", NoSync: true, Workers: workers})
		if err != nil {
			return err
		}
		if cpuProfile != "" {
			f, err := os.Create(fmt.Sprintf("%s.%d", cpuProfile, r))
			if err != nil {
				return err
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				return err
			}
		}
		c0 := cpuSelf()
		t := time.Now()
		all, err := fresh.CompareFiles(ctx, ref, nil)
		if err != nil {
			return err
		}
		page := all[:min(pageSize, len(all))]
		fig["boxsnap"] = append(fig["boxsnap"], time.Since(t).Seconds())
		fig["boxsnap cpu"] = append(fig["boxsnap cpu"], cpuSelf()-c0)
		if cpuProfile != "" {
			pprof.StopCPUProfile()
		}
		// Again in the same backend, its manifest cached, as a server's
		// second look is (the restore dialog, then its list).
		c0, t = cpuSelf(), time.Now()
		if _, err := fresh.CompareFiles(ctx, ref, nil); err != nil {
			return err
		}
		fig["boxsnap warm"] = append(fig["boxsnap warm"], time.Since(t).Seconds())
		fig["boxsnap warm cpu"] = append(fig["boxsnap warm cpu"], cpuSelf()-c0)
		if len(all) != want || len(page) != min(pageSize, want) {
			return fmt.Errorf("boxsnap listed %d changes, want %d", len(all), want)
		}
		_ = fresh.Close(ctx)

		if err := timeOthers(then, tree, want, fig); err != nil {
			return err
		}
		fmt.Printf("run %d: boxsnap %.3f s (cpu %.3f s; again %.3f s), diff -rq %.3f s (cpu %.3f s), rsync -an %.3f s (cpu %.3f s)\n", r,
			fig["boxsnap"][r-1], fig["boxsnap cpu"][r-1], fig["boxsnap warm"][r-1], fig["diff"][r-1], fig["diff cpu"][r-1], fig["rsync"][r-1], fig["rsync cpu"][r-1])
	}
	printMedians(fig, runs)
	_ = local.UnmountAll(work)
	return os.RemoveAll(work)
}

// timeOthers times diff -rq and rsync -an listing what changed between
// then and tree, each checked to list about want changes, into fig.
func timeOthers(then, tree string, want int, fig map[string][]float64) error {
	t := time.Now()
	cmd := exec.Command("diff", "-rq", then, tree)
	out, err := cmd.Output()
	if err != nil && !isExit1(err) {
		return fmt.Errorf("diff -rq: %w", err)
	}
	fig["diff"] = append(fig["diff"], time.Since(t).Seconds())
	fig["diff cpu"] = append(fig["diff cpu"], cpuOf(cmd))
	if n := lines(out); n < want-40 {
		return fmt.Errorf("diff -rq listed %d lines, want about %d", n, want)
	}

	t = time.Now()
	cmd = exec.Command("rsync", "-an", "--delete", "--itemize-changes", tree+"/", then+"/")
	out, err = cmd.Output()
	if err != nil {
		return fmt.Errorf("rsync: %w", err)
	}
	fig["rsync"] = append(fig["rsync"], time.Since(t).Seconds())
	fig["rsync cpu"] = append(fig["rsync cpu"], cpuOf(cmd))
	if n := lines(out); n < want {
		return fmt.Errorf("rsync listed %d lines, want at least %d", n, want)
	}
	return nil
}

// printMedians prints each figure's median of the runs, boxsnap's beside
// diff's and rsync's.
func printMedians(fig map[string][]float64, runs int) {
	med := func(k string) float64 {
		v := append([]float64(nil), fig[k]...)
		sort.Float64s(v)
		return v[len(v)/2]
	}
	fmt.Println()
	fmt.Printf("Compare with now, %d files, 1%% changed: medians of %d runs (page cache warm for all).\n", treeFiles, runs)
	fmt.Println("Wall time on a shared machine, and CPU time (user + system, all threads), which the other load moves less:")
	fmt.Printf("  boxsnap, first page of %d:             wall %.3f s, cpu %.3f s\n", pageSize, med("boxsnap"), med("boxsnap cpu"))
	fmt.Printf("  boxsnap again, its manifest cached:    wall %.3f s, cpu %.3f s\n", med("boxsnap warm"), med("boxsnap warm cpu"))
	fmt.Printf("  diff -rq:                              wall %.3f s, cpu %.3f s  (ratio to boxsnap: wall %.2f, cpu %.2f)\n",
		med("diff"), med("diff cpu"), med("diff")/med("boxsnap"), med("diff cpu")/med("boxsnap cpu"))
	fmt.Printf("  rsync -an --delete --itemize-changes:  wall %.3f s, cpu %.3f s  (ratio to boxsnap: wall %.2f, cpu %.2f)\n",
		med("rsync"), med("rsync cpu"), med("rsync")/med("boxsnap"), med("rsync cpu")/med("boxsnap cpu"))
}

func isExit1(err error) bool {
	ee, ok := err.(*exec.ExitError)
	return ok && ee.ExitCode() == 1
}

func lines(b []byte) int { return bytes.Count(b, []byte("\n")) }

// buildTree writes 100,000 files of 1 to 4 KiB of pseudo-random bytes.
func buildTree(dir string) ([]string, error) {
	rng := rand.New(rand.NewPCG(13, 1))
	var key [32]byte
	src := rand.NewChaCha8(key)
	buf := make([]byte, 4096)
	paths := make([]string, 0, treeFiles)
	for d := 0; d < folders; d++ {
		if err := os.MkdirAll(filepath.Join(dir, fmt.Sprintf("d%03d", d)), 0o755); err != nil {
			return nil, err
		}
	}
	for i := 0; i < treeFiles; i++ {
		n := 1024 + rng.IntN(3072)
		_, _ = src.Read(buf[:n])
		rel := filepath.Join(fmt.Sprintf("d%03d", i%folders), fmt.Sprintf("f%06d.txt", i))
		if err := os.WriteFile(filepath.Join(dir, rel), buf[:n], 0o644); err != nil {
			return nil, err
		}
		paths = append(paths, rel)
	}
	return paths, nil
}

// churn changes 1% of the files (half keep their size), adds 20 and
// removes 20, and says how many paths differ.
func churn(dir string, paths []string) (int, error) {
	rng := rand.New(rand.NewPCG(7, 7))
	changed := map[int]bool{}
	for len(changed) < treeFiles/100 {
		changed[rng.IntN(len(paths))] = true
	}
	k := 0
	for i := range changed {
		p := filepath.Join(dir, paths[i])
		data, err := os.ReadFile(p)
		if err != nil {
			return 0, err
		}
		if k%2 == 0 {
			binary.LittleEndian.PutUint64(data, rng.Uint64()) // same size
		} else {
			data = append(data, "one more line\n"...)
		}
		k++
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return 0, err
		}
	}
	removed := 0
	for i := 0; removed < 20; i++ {
		if changed[i] {
			continue
		}
		if err := os.Remove(filepath.Join(dir, paths[i])); err != nil {
			return 0, err
		}
		removed++
	}
	for i := 0; i < 20; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("d%03d", i), fmt.Sprintf("new%02d.txt", i)), []byte(strings.Repeat("new\n", 10)), 0o644); err != nil {
			return 0, err
		}
	}
	return len(changed) + 40, nil
}

// cpuSelf is this process's CPU time so far, user and system, in seconds.
func cpuSelf() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// cpuOf is a finished command's CPU time, user and system, in seconds.
func cpuOf(cmd *exec.Cmd) float64 {
	if cmd.ProcessState == nil {
		return 0
	}
	return (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
}
