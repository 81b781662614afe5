package contentledger

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local"
	"github.com/boxsnap/boxsnap/providers/local/objstore"
	"github.com/boxsnap/boxsnap/providers/local/objstore/s3test"
	"github.com/boxsnap/boxsnap/providers/local/ship"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

var _ ship.Ledger = (*Ledger)(nil)

// killable is the real bucket, whose puts fail from the n-th on while
// killAfter is set: a take killed while it ships.
type killable struct {
	objstore.Objects
	mu        sync.Mutex
	puts      int
	killAfter int
}

var errKilled = errors.New("killed")

func (k *killable) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	k.mu.Lock()
	k.puts++
	killed := k.killAfter > 0 && k.puts > k.killAfter
	k.mu.Unlock()
	if killed {
		return errKilled
	}
	return k.Objects.Put(ctx, key, r, size)
}

func (k *killable) kill(after int) {
	k.mu.Lock()
	k.puts, k.killAfter = 0, after
	k.mu.Unlock()
}

type fixture struct {
	t      *testing.T
	ctx    context.Context
	ledger *Ledger
	srv    *s3test.Server
	cfg    objstore.Config
	bucket *objstore.Bucket
	objs   *killable
	remote *ship.Remote
	b      *local.Backend
	g      providers.Guest
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{t: t, ctx: t.Context()}
	f.ledger = New(dbtest.New(t))
	f.srv = s3test.Start(t)
	f.cfg = f.srv.Bucket(t)
	var err error
	if f.bucket, err = objstore.Open(f.cfg); err != nil {
		t.Fatal(err)
	}
	f.objs = &killable{Objects: f.bucket}
	// Objects on their own, as before packs; a test of packs turns them on.
	f.remote = &ship.Remote{Objects: f.objs, Keys: f.cfg, Ledger: f.ledger, Singles: true}
	f.b, err = local.New(local.Config{Root: t.TempDir(), Install: "in-test", NoSync: true, ContentStore: f.remote})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = local.UnmountAll(f.b.Root()) })
	f.g, err = f.b.Acquire(f.ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: "bx" + store.RandomSuffix()[:12], Kind: "linux"}})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) write(rel string, size int, seed byte) {
	p := make([]byte, size)
	for i := range p {
		p[i] = seed + byte(i*7/13)
	}
	path := filepath.Join(f.b.BoxDir(f.g), rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(path, p, 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) take(id string) error {
	_, err := f.b.Snapshot(f.ctx, f.g, providers.SnapshotTake{Label: providers.Label{Box: f.g.Ref, Snapshot: id}}, nil)
	return err
}

// named is every key the ready snapshots name.
func (f *fixture) named(ids ...string) map[string]bool {
	out := map[string]bool{}
	for _, id := range ids {
		keys, err := f.ledger.NamedBy(f.ctx, id)
		if err != nil {
			f.t.Fatal(err)
		}
		if len(keys) == 0 {
			f.t.Fatalf("snapshot %s names nothing in the ledger", id)
		}
		// What its bases and it name must be what its take recorded it holds.
		var held int
		var digest string
		if err := f.ledger.pool.QueryRow(f.ctx, `SELECT held, digest FROM content_snapshots WHERE snapshot_id = $1`, id).Scan(&held, &digest); err != nil {
			f.t.Fatal(err)
		}
		if held != len(keys) || digest != Digest(keys) {
			f.t.Fatalf("snapshot %s holds %d keys through its names and its bases'; its take recorded %d (digest %.12s, recorded %.12s)", id, len(keys), held, Digest(keys), digest)
		}
		for _, k := range keys {
			out[k] = true
		}
	}
	return out
}

// inBucket is every key in the bucket (listed by the test only).
func (f *fixture) inBucket() map[string]bool {
	keys, err := f.srv.List(f.ctx, f.cfg.Bucket)
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[string]bool{}
	for _, k := range keys {
		out[k] = true
	}
	return out
}

// keptWhole fails the test when the bucket lacks an object a ready
// snapshot names: its own key, or the pack the ledger places it in.
func (f *fixture) keptWhole(when string, ready ...string) {
	f.t.Helper()
	have := f.inBucket()
	named := keys(f.named(ready...))
	packOf := map[string]string{}
	if err := f.ledger.Locate(f.ctx, named, func(key, pack string, _, _, _ int64) { packOf[key] = pack }); err != nil {
		f.t.Fatal(err)
	}
	for _, k := range named {
		if p, ok := packOf[k]; ok && !have[p] {
			f.t.Fatalf("%s: pack %s, which holds object %s a ready snapshot names, was deleted", when, p, k)
		}
		if _, ok := packOf[k]; !ok && !have[k] {
			f.t.Fatalf("%s: object %s, which a ready snapshot names, was deleted", when, k)
		}
	}
}

// runOutClaims moves the ledger's clock past every claim's end, as the
// grace passing would.
func (f *fixture) runOutClaims() {
	if _, err := f.ledger.pool.Exec(f.ctx, `UPDATE content_objects SET claimed_until = now() - interval '1 second'`); err != nil {
		f.t.Fatal(err)
	}
}

// TestBucketFreeingByTheDatabase: which snapshot names which object is
// recorded in PostgreSQL, and a sweep deletes an object only when nothing
// names it and no take claims it. Takes killed while shipping and sweeps
// killed while freeing never cost an object a ready snapshot names, a
// take that claims an object while a sweep deletes it ships it again, and
// after the sweep no object is left that nothing names.
func TestBucketFreeingByTheDatabase(t *testing.T) {
	f := newFixture(t)
	f.write("a.bin", 300<<10, 1)
	f.write("shared.bin", 200<<10, 2)
	f.write("big.bin", 6<<20, 3)
	if err := f.take("snaaaaaaaaaaaa"); err != nil {
		t.Fatal(err)
	}
	f.keptWhole("after the first take", "snaaaaaaaaaaaa")

	// A take killed while shipping: its objects are claimed, not named.
	f.write("b.bin", 500<<10, 4)
	f.write("c.bin", 400<<10, 5)
	f.objs.kill(1)
	if err := f.take("snbbbbbbbbbbbb"); err == nil {
		t.Fatal("a take killed while shipping answered ready")
	}
	f.objs.kill(0)
	if n, err := f.ledger.Sweep(f.ctx, f.bucket); err != nil || n != 0 {
		t.Fatalf("a sweep while a take's claims run freed %d objects (%v); want none", n, err)
	}
	f.keptWhole("after a sweep beside a killed take", "snaaaaaaaaaaaa")

	// Its claims run out before it is taken again: a sweep frees what it
	// shipped, and the take, resumed, ships it again.
	f.runOutClaims()
	freed, err := f.ledger.Sweep(f.ctx, f.bucket)
	if err != nil || freed == 0 {
		t.Fatalf("a sweep after the killed take's claims ran out freed %d (%v); want its shipped objects", freed, err)
	}
	f.keptWhole("after the killed take's objects were freed", "snaaaaaaaaaaaa")
	if err := f.take("snbbbbbbbbbbbb"); err != nil {
		t.Fatalf("the killed take, taken again: %v", err)
	}
	f.keptWhole("after the killed take was taken again", "snaaaaaaaaaaaa", "snbbbbbbbbbbbb")

	// The first snapshot deleted; a sweep killed after its bucket deletes,
	// before it commits, forgets nothing, and the next one frees them.
	if err := f.b.DeleteSnapshot(f.ctx, providers.SnapshotRef{Ref: "snaaaaaaaaaaaa", ID: "snaaaaaaaaaaaa", Guest: f.g}, nil); err != nil {
		t.Fatal(err)
	}
	f.runOutClaims()
	f.ledger.hooks.deleted = func() error { return errKilled }
	if _, err := f.ledger.Sweep(f.ctx, f.bucket); !errors.Is(err, errKilled) {
		t.Fatalf("the killed sweep answered %v", err)
	}
	f.ledger.hooks.deleted = nil
	if _, unnamed, _ := f.ledger.Counts(f.ctx); unnamed == 0 {
		t.Fatalf("a sweep killed before it committed forgot the objects it deleted")
	}
	// A take that claims what the killed sweep deleted must put it again.
	var unnamedKeys []string
	rows, err := f.ledger.pool.Query(f.ctx, `SELECT key FROM content_objects o WHERE NOT EXISTS (SELECT 1 FROM content_names n WHERE n.key = o.key)`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		unnamedKeys = append(unnamedKeys, k)
	}
	rows.Close()
	inBucket := f.inBucket()
	stored, err := f.ledger.Claim(f.ctx, unnamedKeys)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range unnamedKeys {
		if stored[k] && !inBucket[k] {
			t.Fatalf("after a sweep killed half way, a claim answers %s stored, which the bucket lacks", k)
		}
	}
	f.keptWhole("after a killed sweep", "snbbbbbbbbbbbb")

	// A take claiming an object while a sweep deletes it waits for the
	// sweep, finds it not stored, and ships it again.
	f.write("d.bin", 100<<10, 6)
	if err := f.take("sncccccccccccc"); err != nil {
		t.Fatal(err)
	}
	if err := f.b.DeleteSnapshot(f.ctx, providers.SnapshotRef{Ref: "sncccccccccccc", ID: "sncccccccccccc", Guest: f.g}, nil); err != nil {
		t.Fatal(err)
	}
	f.runOutClaims()
	var during map[string]bool
	var claimed sync.WaitGroup
	dKey := ""
	for k := range f.inBucket() {
		if !f.named("snbbbbbbbbbbbb")[k] && filepath.Dir(k) != "manifests" {
			dKey = k
		}
	}
	f.ledger.hooks.deleted = func() error {
		f.ledger.hooks.deleted = nil
		claimed.Add(1)
		go func() {
			defer claimed.Done()
			var err error
			if during, err = f.ledger.Claim(context.Background(), []string{dKey}); err != nil {
				t.Error(err)
			}
		}()
		return nil
	}
	if _, err := f.ledger.Sweep(f.ctx, f.bucket); err != nil {
		t.Fatal(err)
	}
	claimed.Wait()
	if dKey == "" || during[dKey] {
		t.Fatalf("a claim made while a sweep deleted %q answered it stored", dKey)
	}

	// Everything claimed ran out: after the sweep the bucket holds exactly
	// what the ready snapshot names.
	f.runOutClaims()
	if _, err := f.ledger.Sweep(f.ctx, f.bucket); err != nil {
		t.Fatal(err)
	}
	f.keptWhole("after the last sweep", "snbbbbbbbbbbbb")
	want := keys(f.named("snbbbbbbbbbbbb"))
	got := keys(f.inBucket())
	if !slices.Equal(want, got) {
		t.Fatalf("after the sweep the bucket holds %d objects, the ready snapshot names %d: unnamed %v", len(got), len(want), minus(got, want))
	}
	if objects, unnamed, _ := f.ledger.Counts(f.ctx); unnamed != 0 || objects != int64(len(want)) {
		t.Fatalf("the ledger records %d objects, %d unnamed; want %d, none", objects, unnamed, len(want))
	}
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func minus(a, b []string) []string {
	var out []string
	for _, k := range a {
		if !slices.Contains(b, k) {
			out = append(out, k)
		}
	}
	return out
}
