// Command export measures exporting a box's snapshot to a file beside
// `tar czf` of the same tree: a full export of a box of -size bytes (1 GiB
// by default, in -files files of deterministic pseudo-random content), and
// an incremental export after 1% of the files changed (boxsnap's --base,
// beside `tar czf` of just the changed files), with each file's size. It
// runs the local backend's export, the part of `boxsnap snapshot export`
// that reads and writes every byte; the core only frames its output.
//
//	go run ./bench/export [-size 1073741824] [-files 20000] [-runs 3] [-dir /tmp/boxsnap-bench-export]
package main

import (
	"context"
	"flag"
	"fmt"
	"github.com/boxsnap/boxsnap/bench/benchtree"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local"
)

const boxID = "bench"

func main() {
	work := flag.String("dir", "/tmp/boxsnap-bench-export", "work folder (its contents are deleted)")
	size := flag.Int64("size", 1<<30, "the box's size in bytes")
	files := flag.Int("files", 20000, "the box's number of files")
	runs := flag.Int("runs", 3, "runs; each figure is the median")
	flag.Parse()
	if err := run(*work, *size, *files, *runs); err != nil {
		log.Fatal(err)
	}
}

func run(work string, size int64, files, runs int) error {
	ctx := context.Background()
	_ = local.UnmountAll(work) // each box is a file system of its own, as root
	if err := os.RemoveAll(work); err != nil {
		return err
	}
	defer func() { _ = local.UnmountAll(work); _ = os.RemoveAll(work) }()
	root := filepath.Join(work, "store")
	b, err := local.New(local.Config{Root: root, Install: "bench", NoSync: true})
	if err != nil {
		return err
	}
	tree := filepath.Join(root, "boxes", boxID)
	fmt.Printf("building the box: %d files, %d bytes\n", files, size)
	paths, err := benchtree.Build(tree, size, files)
	if err != nil {
		return err
	}
	g, err := b.Acquire(ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: boxID, Kind: "linux"}, Adopt: boxID})
	if err != nil {
		return err
	}
	take := func() (providers.SnapshotRef, error) {
		t, err := b.Snapshot(ctx, g, providers.SnapshotTake{Label: providers.Label{Box: boxID}}, nil)
		return providers.SnapshotRef{ID: t.Ref, Ref: t.Ref, Guest: g}, err
	}
	base, err := take()
	if err != nil {
		return fmt.Errorf("take: %w", err)
	}
	changed, err := benchtree.Churn(tree, paths, 1)
	if err != nil {
		return err
	}
	next, err := take()
	if err != nil {
		return fmt.Errorf("take: %w", err)
	}
	out := filepath.Join(work, "out")
	export := func(ref providers.SnapshotRef, opts providers.ExportOptions) (float64, int64, error) {
		f, err := os.Create(out)
		if err != nil {
			return 0, 0, err
		}
		defer f.Close()
		t0 := time.Now()
		if err := b.ExportSnapshot(ctx, ref, opts, f); err != nil {
			return 0, 0, err
		}
		if err := f.Sync(); err != nil {
			return 0, 0, err
		}
		d := time.Since(t0).Seconds()
		fi, _ := f.Stat()
		return d, fi.Size(), nil
	}
	list := filepath.Join(work, "changed.txt")
	if err := os.WriteFile(list, []byte(strings.Join(changed, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	fig := map[string][]float64{}
	sizes := map[string]int64{}
	add := func(k string, d float64, n int64, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		fig[k] = append(fig[k], d)
		sizes[k] = n
		return nil
	}
	for r := 1; r <= runs; r++ {
		fmt.Printf("run %d of %d\n", r, runs)
		d, n, err := export(base, providers.ExportOptions{})
		if err := add("full", d, n, err); err != nil {
			return err
		}
		d, n, err = tarCzf(out, tree, ".")
		if err := add("tar_full", d, n, err); err != nil {
			return err
		}
		d, n, err = export(next, providers.ExportOptions{Base: &base})
		if err := add("incr", d, n, err); err != nil {
			return err
		}
		d, n, err = tarCzf(out, tree, "-T", list)
		if err := add("tar_incr", d, n, err); err != nil {
			return err
		}
	}
	printFigures(fig, sizes, runs, files, size, len(changed))
	return nil
}

// tarCzf times tar czf of tree into out, with args naming what it packs,
// synced to disk as an export is, and answers the archive's size.
func tarCzf(out, tree string, args ...string) (float64, int64, error) {
	t0 := time.Now()
	cmd := exec.Command("tar", append([]string{"czf", out, "-C", tree}, args...)...)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return 0, 0, fmt.Errorf("tar czf: %w", err)
	}
	if err := exec.Command("sync", out).Run(); err != nil {
		return 0, 0, err
	}
	d := time.Since(t0).Seconds()
	fi, err := os.Stat(out)
	if err != nil {
		return 0, 0, err
	}
	return d, fi.Size(), nil
}

// printFigures prints each figure's median of the runs and its size, and
// tar's ratios to boxsnap's export.
func printFigures(fig map[string][]float64, sizes map[string]int64, runs, files int, size int64, changed int) {
	med := func(k string) float64 {
		v := append([]float64(nil), fig[k]...)
		sort.Float64s(v)
		return v[len(v)/2]
	}
	fmt.Printf("\nFigures: medians of %d runs, seconds, page cache warm; a box of %d files, %.0f MiB, %d files (1%%) changed\n", runs, files, float64(size)/(1<<20), changed)
	for _, row := range []struct{ name, key string }{
		{"boxsnap export, full", "full"},
		{"tar czf, the whole box", "tar_full"},
		{"boxsnap export --base, 1% changed", "incr"},
		{"tar czf, the changed files only", "tar_incr"},
	} {
		fmt.Printf("  %-36s %8.3f s   %8.1f MiB\n", row.name, med(row.key), float64(sizes[row.key])/(1<<20))
	}
	fmt.Printf("Ratios:\n  tar czf / boxsnap export, full        %6.2f\n  tar czf / boxsnap export, increment   %6.2f\n",
		med("tar_full")/med("full"), med("tar_incr")/med("incr"))
}
