// Command repack measures the content store's repack (a real versitygw on
// loopback, the ledger in a private PostgreSQL): a box churned for some
// rounds (each round deletes a share of the box's files and writes new
// ones, takes a snapshot and deletes the one before), then the sweep as
// before repacks (packs nothing lies in deleted, the others kept whole),
// then the sweep that repacks, and the sweep after the grace. It prints
// the packs' bytes and live bytes after each, the time the repack took
// per pack, and checks that the last snapshot forks on another host
// byte-exact. bench/repack/run.sh builds and runs it.
package main

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/bench/benchbucket"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local"
	"github.com/boxsnap/boxsnap/providers/local/ship"
)

func main() {
	work := flag.String("dir", "/tmp/boxsnap-bench-repack", "work folder (its contents are deleted)")
	rounds := flag.Int("rounds", 6, "rounds of churn")
	files := flag.Int("files", 500, "files written each round, 4 to 60 KiB each")
	drop := flag.Float64("drop", 0.75, "share of the box's files each round deletes")
	flag.Parse()
	if err := run(*work, *rounds, *files, *drop); err != nil {
		log.Fatal(err)
	}
}

// env is the run's servers, folders and box.
type env struct {
	ctx context.Context
	*benchbucket.Servers
}

func run(work string, rounds, files int, drop float64) error {
	e, err := setUp(work)
	if err != nil {
		return err
	}
	defer e.Stop()
	b, err := e.backend("host-a")
	if err != nil {
		return err
	}
	g, err := b.Acquire(e.ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxbenchrepack", Kind: "linux"}})
	if err != nil {
		return err
	}
	last, err := e.churn(b, g, rounds, files, drop)
	if err != nil {
		return err
	}
	fmt.Printf("churn: %d rounds of %d files (4-60 KiB, random), %.0f %% of the box's files deleted each round; only the last snapshot kept\n",
		rounds, files, 100*drop)
	if err := e.runOutClaims(); err != nil {
		return err
	}
	if _, err := e.Ledger.Sweep(e.ctx, e.Objects); err != nil {
		return err
	}
	if err := e.say("after the sweep as before (no repack)"); err != nil {
		return err
	}
	var before int
	if err := e.Pool.QueryRow(e.ctx, `SELECT count(*) FROM content_packs WHERE stored`).Scan(&before); err != nil {
		return err
	}
	start := time.Now()
	if _, err := e.Ledger.Sweep(e.ctx, &ship.Repacker{Objects: e.Objects, Keys: e.Keys}); err != nil {
		return err
	}
	took := time.Since(start)
	// The packs emptied are kept for the grace; the new ones are stored.
	var emptied, after int
	if err := e.Pool.QueryRow(e.ctx, `SELECT count(*) FILTER (WHERE claimed_until > now()), count(*) FROM content_packs WHERE stored`).Scan(&emptied, &after); err != nil {
		return err
	}
	made := after - before
	fmt.Printf("the sweep that repacks: %d packs emptied into %d new, in %.2f s (%.0f ms a pack emptied)\n",
		emptied, made, took.Seconds(), 1000*took.Seconds()/float64(max(emptied, 1)))
	if err := e.runOutClaims(); err != nil {
		return err
	}
	if _, err := e.Ledger.Sweep(e.ctx, &ship.Repacker{Objects: e.Objects, Keys: e.Keys}); err != nil {
		return err
	}
	if err := e.say("after the grace and the next sweep"); err != nil {
		return err
	}
	return e.forkElsewhere(last, sumsOf(b.BoxDir(g)))
}

// churn runs the rounds and answers the last snapshot's id.
func (e *env) churn(b *local.Backend, g providers.Guest, rounds, files int, drop float64) (string, error) {
	rng := rand.New(rand.NewPCG(29, 29))
	dir := b.BoxDir(g)
	var have []string
	prev := ""
	for r := range rounds {
		kept := have[:0]
		for _, p := range have {
			if rng.Float64() < drop {
				if err := os.Remove(p); err != nil {
					return "", err
				}
				continue
			}
			kept = append(kept, p)
		}
		have = kept
		for i := range files {
			p := filepath.Join(dir, fmt.Sprintf("r%02d/f%04d.bin", r, i))
			data := make([]byte, 4<<10+rng.IntN(56<<10))
			for j := range data {
				data[j] = byte(rng.Uint32())
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return "", err
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				return "", err
			}
			have = append(have, p)
		}
		id := fmt.Sprintf("snbenchrep%04d", r)
		if _, err := b.Snapshot(e.ctx, g, providers.SnapshotTake{Label: providers.Label{Box: g.Ref, Snapshot: id}}, nil); err != nil {
			return "", err
		}
		if prev != "" {
			if err := b.DeleteSnapshot(e.ctx, providers.SnapshotRef{Ref: prev, ID: prev, Guest: g}, nil); err != nil {
				return "", err
			}
		}
		prev = id
	}
	return prev, nil
}

// say prints the packs in the bucket (listed by the bench only) and the
// bytes the ledger's stored objects hold in them.
func (e *env) say(when string) error {
	keys, err := e.S3.List(e.ctx, benchbucket.Bucket)
	if err != nil {
		return err
	}
	var packs int
	var size int64
	for _, k := range keys {
		if !strings.HasPrefix(k, "packs/") {
			continue
		}
		n, _, err := e.Objects.Head(e.ctx, k)
		if err != nil {
			return err
		}
		packs, size = packs+1, size+n
	}
	_, _, live, err := e.Ledger.PackWaste(e.ctx)
	if err != nil {
		return err
	}
	fmt.Printf("%s: %d packs in the bucket, %.1f MB; live objects %.1f MB (%.2fx)\n", when, packs, float64(size)/1e6, float64(live)/1e6, float64(size)/float64(max(live, 1)))
	return nil
}

// runOutClaims moves the ledger past every claim's and grace's end.
func (e *env) runOutClaims() error {
	for _, q := range []string{`UPDATE content_objects SET claimed_until = NULL`, `UPDATE content_packs SET claimed_until = now() - interval '1 second' WHERE claimed_until IS NOT NULL`} {
		if _, err := e.Pool.Exec(e.ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// forkElsewhere forks snapshot id on a second host (its own empty folder)
// and fails unless it holds want byte-exact.
func (e *env) forkElsewhere(id string, want map[string][32]byte) error {
	other, err := e.backend("host-b")
	if err != nil {
		return err
	}
	start := time.Now()
	g, err := other.ForkSnapshot(e.ctx, providers.SnapshotRef{Ref: id, ID: id}, providers.BoxIdentity{ID: "bxbenchother", Kind: "linux"}, nil)
	if err != nil {
		return fmt.Errorf("fork on another host after the repack: %w", err)
	}
	got := sumsOf(other.BoxDir(g))
	for rel, sum := range want {
		if got[rel] != sum {
			return fmt.Errorf("the fork on another host after the repack: %s is not byte-exact", rel)
		}
	}
	if len(got) != len(want) {
		return fmt.Errorf("the fork on another host after the repack holds %d files, want %d", len(got), len(want))
	}
	fmt.Printf("the last snapshot forked on another host byte-exact (%d files) in %.2f s\n", len(want), time.Since(start).Seconds())
	return nil
}

// sumsOf is every regular file under dir but the box's own marker, and
// its SHA-256.
func sumsOf(dir string) map[string][32]byte {
	out := map[string][32]byte{}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if strings.HasPrefix(rel, ".boxsnap/") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err == nil {
			out[rel] = sha256.Sum256(b)
		}
		return err
	})
	return out
}

func setUp(work string) (*env, error) {
	ctx := context.Background()
	srv, err := benchbucket.Start(ctx, work)
	if err != nil {
		return nil, err
	}
	return &env{ctx: ctx, Servers: srv}, nil
}

func (e *env) backend(name string) (*local.Backend, error) {
	return e.Backend(name, slog.New(slog.DiscardHandler))
}
