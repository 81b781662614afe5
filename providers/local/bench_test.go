package local

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/state"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// The Go benchmarks' small tree: benchFiles files of 1 to 64 KiB. The
// side-by-side benchmark on a 1 GiB tree is bench/local/run.sh.
const benchFiles = 2000

func benchSetup(b *testing.B) (*Backend, providers.Guest, []string) {
	return benchSetupN(b, benchFiles, 64*1024)
}

func benchSetupN(b *testing.B, files, maxSize int) (*Backend, providers.Guest, []string) {
	b.Helper()
	be, err := New(Config{Root: b.TempDir(), NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	unmountAtEnd(b, be)
	g, err := be.Acquire(context.Background(), providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxbench"}})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var paths []string
	for i := 0; i < files; i++ {
		rel := filepath.Join(fmt.Sprintf("d%02d", i%40), fmt.Sprintf("f%04d", i))
		p := filepath.Join(be.BoxDir(g), rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		buf := make([]byte, 1024+rng.IntN(maxSize-1024))
		for j := range buf {
			buf[j] = byte(rng.Uint32())
		}
		if err := os.WriteFile(p, buf, 0o644); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, rel)
	}
	return be, g, paths
}

// churnBench rewrites 1% of the files.
func churnBench(b *testing.B, be *Backend, g providers.Guest, paths []string, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	for _, i := range rng.Perm(len(paths))[:len(paths)/100] {
		p := filepath.Join(be.BoxDir(g), paths[i])
		if err := os.WriteFile(p, []byte(fmt.Sprintf("changed %d %d", seed, i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTakeFull(b *testing.B) {
	be, g, _ := benchSetup(b)
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		// A fresh store each time: every file is new content.
		os.RemoveAll(be.Path(store.DirSnapshots))
		os.RemoveAll(be.Path(store.DirContent))
		be2, _ := New(Config{Root: be.root, NoSync: true})
		be2.UpdateState(g.Ref, func(s *state.BoxState) { s.Last = "" })
		b.StartTimer()
		if _, err := be2.Snapshot(ctx, g, providers.SnapshotTake{}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTakeIncremental(b *testing.B) {
	be, g, paths := benchSetup(b)
	ctx := context.Background()
	if _, err := be.Snapshot(ctx, g, providers.SnapshotTake{}, nil); err != nil {
		b.Fatal(err)
	}
	seed := uint64(0)
	for b.Loop() {
		b.StopTimer()
		seed++
		churnBench(b, be, g, paths, seed)
		b.StartTimer()
		if _, err := be.Snapshot(ctx, g, providers.SnapshotTake{}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRestoreOnePercentAway(b *testing.B) {
	be, g, paths := benchSetup(b)
	ctx := context.Background()
	t0, err := be.Snapshot(ctx, g, providers.SnapshotTake{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	ref := providers.SnapshotRef{Ref: t0.Ref}
	seed := uint64(0)
	for b.Loop() {
		b.StopTimer()
		seed++
		churnBench(b, be, g, paths, seed)
		b.StartTimer()
		if _, err := be.RestoreSnapshot(ctx, g, ref, providers.StepRollback, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMakeABox: what making an empty box costs, a file system of its
// own (an image made, mounted, lost+found removed) beside a plain folder
// (the watch's).
func BenchmarkMakeABox(b *testing.B) {
	for _, watch := range []bool{false, true} {
		name := "own file system"
		if watch {
			name = "plain folder"
		}
		b.Run(name, func(b *testing.B) {
			be, err := New(Config{Root: b.TempDir(), NoSync: true, DiskImages: !watch})
			if err != nil {
				b.Fatal(err)
			}
			unmountAtEnd(b, be)
			if exact, why, _ := be.DiskBounding(); !watch && !exact {
				b.Skip("a box cannot be a file system of its own here: " + why)
			}
			ctx := context.Background()
			i := 0
			for b.Loop() {
				i++
				g, err := be.Acquire(ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: fmt.Sprintf("bxmake%d", i)}})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := be.Release(ctx, g); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}
