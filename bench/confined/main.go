// Command confined times the local backend's takes of a real tree: a full
// take into an empty store and an incremental take after 1 % of its files
// changed. run.sh builds it from this checkout and from an earlier commit
// and runs both, with cp -a of the same tree, side by side.
package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
	"syscall"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local"
)

func main() {
	tree := flag.String("tree", "", "the tree to take (copied into the box's folder first, untimed)")
	work := flag.String("dir", "/tmp/boxsnap-confined", "work folder (its contents are deleted)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the takes to this file")
	traceFile := flag.String("trace", "", "write an execution trace of the takes to this file (go tool trace -pprof=syscall shows where they wait in the kernel)")
	debug := flag.Bool("debug", false, "log the backend's debug lines (each take's phases)")
	flag.Parse()
	if *debug {
		slog.SetLogLoggerLevel(slog.LevelDebug)
	}
	if *traceFile != "" {
		f, err := os.Create(*traceFile)
		if err != nil {
			log.Fatal(err)
		}
		if err := trace.Start(f); err != nil {
			log.Fatal(err)
		}
		defer trace.Stop()
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
	if *tree == "" {
		log.Fatal("-tree is needed")
	}
	full, incr, files, err := run(*tree, *work)
	if err != nil {
		pprof.StopCPUProfile()
		trace.Stop()
		log.Fatal(err)
	}
	fmt.Printf("files=%d full_ms=%.1f incremental_ms=%.1f\n", files, full.Seconds()*1000, incr.Seconds()*1000)
}

func run(tree, work string) (full, incr time.Duration, files int, err error) {
	ctx := context.Background()
	_ = local.UnmountAll(work) // each box is a file system of its own, as root
	if err := os.RemoveAll(work); err != nil {
		return 0, 0, 0, err
	}
	defer func() { _ = local.UnmountAll(work); _ = os.RemoveAll(work) }()
	b, err := local.New(local.Config{Root: filepath.Join(work, "store"), Install: "bench", NoSync: true})
	if err != nil {
		return 0, 0, 0, err
	}
	g, err := b.Acquire(ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxconfined", Kind: "linux"}})
	if err != nil {
		return 0, 0, 0, err
	}
	dir := b.BoxDir(g)
	if out, err := exec.Command("cp", "-a", tree+"/.", dir+"/tree").CombinedOutput(); err != nil {
		return 0, 0, 0, fmt.Errorf("cp -a: %v: %s", err, out)
	}
	var paths []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			paths = append(paths, p)
		}
		return nil
	})
	// The copy's dirty pages go to disk before the clock starts, so the
	// take does not share the disk with their writeback.
	syscall.Sync()
	t0 := time.Now()
	if _, err := b.Snapshot(ctx, g, providers.SnapshotTake{}, nil); err != nil {
		return 0, 0, 0, fmt.Errorf("full take: %w", err)
	}
	full = time.Since(t0)
	for i := 0; i < len(paths); i += 100 {
		if err := os.WriteFile(paths[i], []byte(fmt.Sprintf("changed %d", i)), 0o644); err != nil {
			return 0, 0, 0, err
		}
	}
	t1 := time.Now()
	if _, err := b.Snapshot(ctx, g, providers.SnapshotTake{}, nil); err != nil {
		return 0, 0, 0, fmt.Errorf("incremental take: %w", err)
	}
	incr = time.Since(t1)
	return full, incr, len(paths), nil
}
