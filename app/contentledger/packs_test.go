package contentledger

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local"
	"github.com/boxsnap/boxsnap/providers/local/objstore"
	"github.com/boxsnap/boxsnap/providers/local/ship"
)

var _ ship.PackLedger = (*Ledger)(nil)

// newPackFixture is the fixture with packs on, as boxsnap runs.
func newPackFixture(t *testing.T) *fixture {
	f := newFixture(t)
	f.remote.Singles = false
	return f
}

// reads is the real bucket, counting the requests a fetch makes.
type reads struct {
	*objstore.Bucket
	mu            sync.Mutex
	gets, ranged  int
	rangedBytes   int64
	corruptRanged bool
}

func (r *reads) Get(ctx context.Context, key, sum string, w io.Writer) error {
	r.mu.Lock()
	r.gets++
	r.mu.Unlock()
	return r.Bucket.Get(ctx, key, sum, w)
}

func (r *reads) GetRange(ctx context.Context, key string, off, n int64, w io.Writer) error {
	r.mu.Lock()
	r.ranged++
	r.rangedBytes += n
	r.mu.Unlock()
	return r.Bucket.GetRange(ctx, key, off, n, w)
}

// otherHost is a second host: its own folder, the same bucket and ledger.
func (f *fixture) otherHost() (*local.Backend, *reads) {
	r := &reads{Bucket: f.bucket}
	b, err := local.New(local.Config{Root: f.t.TempDir(), Install: "in-test", NoSync: true,
		ContentStore: &ship.Remote{Objects: r, Keys: f.cfg, Ledger: f.ledger}})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = local.UnmountAll(b.Root()) })
	return b, r
}

// smallFiles writes n small files under dir, each its own content.
func (f *fixture) smallFiles(dir string, n int, seed byte) {
	for i := range n {
		f.write(fmt.Sprintf("%s/%03d.txt", dir, i), 1000+i*37, seed+byte(i))
	}
}

// sumsOf is every regular file under dir and its SHA-256.
func sumsOf(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		if rel, _ := filepath.Rel(dir, p); strings.HasPrefix(rel, ".boxsnap/") {
			return nil // the box's own identity, not its files
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = sha256.Sum256(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameTree fails the test unless the two folders hold the same files,
// byte-exact.
func sameTree(t *testing.T, what, want, got string) {
	t.Helper()
	w, g := sumsOf(t, want), sumsOf(t, got)
	if len(w) != len(g) {
		t.Fatalf("%s: %d files, want %d", what, len(g), len(w))
	}
	for rel, sum := range w {
		if g[rel] != sum {
			t.Fatalf("%s: %s is not byte-exact", what, rel)
		}
	}
}

// runOutAllClaims moves the ledger's clock past every claim's end, the
// packs' with the objects'.
func (f *fixture) runOutAllClaims() {
	f.runOutClaims()
	if _, err := f.ledger.pool.Exec(f.ctx, `UPDATE content_packs SET claimed_until = now() - interval '1 second' WHERE claimed_until IS NOT NULL`); err != nil {
		f.t.Fatal(err)
	}
}

// TestTakeOfSmallFilesMakesFewPuts: a take of many small files packs them:
// a few PUTs carry hundreds of objects, and no content object is put on
// its own.
func TestTakeOfSmallFilesMakesFewPuts(t *testing.T) {
	f := newPackFixture(t)
	f.smallFiles("small", 400, 1)
	f.write("big.bin", 6<<20, 3)
	f.objs.kill(0)
	if err := f.take("snaaaaaaaaaaaa"); err != nil {
		t.Fatal(err)
	}
	named := len(f.named("snaaaaaaaaaaaa"))
	// One pack, the large file's chunk list, the label, the manifest.
	if f.objs.puts > 5 || named < 400 {
		t.Fatalf("a take of %d objects made %d PUTs; want at most 5", named, f.objs.puts)
	}
	for k := range f.inBucket() {
		if strings.HasPrefix(k, "content/") {
			t.Fatalf("object %s was put on its own, not in a pack", k)
		}
	}
	f.keptWhole("after the take", "snaaaaaaaaaaaa")
}

// TestRestoreFromPacksOnAnotherHost: a snapshot whose objects are in
// packs is forked on a second host (its own folder, the same database and
// bucket) byte-exact, fetched by a few ranged GETs.
func TestRestoreFromPacksOnAnotherHost(t *testing.T) {
	f := newPackFixture(t)
	f.smallFiles("small", 300, 1)
	f.write("big.bin", 6<<20, 3)
	f.write("mid.bin", 2<<20, 4)
	f.write("empty.txt", 0, 0)
	f.write("small/empty.txt", 0, 0)
	if err := f.take("snaaaaaaaaaaaa"); err != nil {
		t.Fatal(err)
	}
	other, r := f.otherHost()
	g, err := other.ForkSnapshot(f.ctx, providers.SnapshotRef{Ref: "snaaaaaaaaaaaa", ID: "snaaaaaaaaaaaa"},
		providers.BoxIdentity{ID: "bxforkedthere1", Kind: "linux"}, nil)
	if err != nil {
		t.Fatalf("fork on the other host: %v", err)
	}
	sameTree(t, "the fork on the other host", f.b.BoxDir(f.g), other.BoxDir(g))
	// The manifest, the label, the chunk list whole; the pack by ranges.
	if r.ranged == 0 || r.gets+r.ranged > 8 {
		t.Fatalf("the fetch of %d objects made %d GETs and %d ranged GETs; want a few ranged GETs", len(f.named("snaaaaaaaaaaaa")), r.gets, r.ranged)
	}
}

// TestCorruptPackRangeMarksDamaged: an object whose bytes in its pack do
// not match its hash marks the snapshot damaged, and the restore that
// needed it refuses before changing anything.
func TestCorruptPackRangeMarksDamaged(t *testing.T) {
	f := newPackFixture(t)
	f.smallFiles("small", 50, 1)
	if err := f.take("snaaaaaaaaaaaa"); err != nil {
		t.Fatal(err)
	}
	// The bytes in its pack of the one file the restore will need.
	orig, err := os.ReadFile(filepath.Join(f.b.BoxDir(f.g), "small/000.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(orig)
	f.spoilInPack(t, f.cfg.ContentKey(hex.EncodeToString(sum[:])), "small/000.txt")
	m, err := f.b.Manifest("snaaaaaaaaaaaa")
	if err != nil {
		t.Fatal(err)
	}
	for h := range m.Hashes() {
		if err := os.Remove(f.b.ContentPath(h)); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	f.write("small/000.txt", 10, 9)
	before := sumsOf(t, f.b.BoxDir(f.g))
	_, err = f.b.RestoreSnapshot(f.ctx, f.g, providers.SnapshotRef{Ref: "snaaaaaaaaaaaa", ID: "snaaaaaaaaaaaa"}, providers.StepRollback, nil)
	if err == nil || !strings.Contains(err.Error(), "does not match its hash: the snapshot is damaged") || !strings.Contains(err.Error(), "Nothing was changed.") {
		t.Fatalf("a restore with a corrupt pack answered %v; want it refused, the snapshot damaged", err)
	}
	if !errors.Is(err, providers.ErrRefused) {
		t.Errorf("%v is not a refusal", err)
	}
	after := sumsOf(t, f.b.BoxDir(f.g))
	if len(after) != len(before) || after["small/000.txt"] != before["small/000.txt"] {
		t.Fatalf("the refused restore changed the box")
	}
	held, err := f.b.HeldSnapshots(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range held {
		if h.Ref.Ref == "snaaaaaaaaaaaa" && (!h.Incomplete || !strings.Contains(h.Error, "damaged")) {
			t.Fatalf("the snapshot is held as %+v; want it incomplete, damaged", h)
		}
	}
}

// TestBucketFreeingWithPacks: with packs, a sweep deletes a pack only when
// no object that is stored or claimed lies in it. A take killed while it
// puts a pack ships again; a pack that also holds objects a ready snapshot
// names stays after the snapshot that made it is deleted (its freed
// objects' bytes are counted as waste); sweeps killed while deleting
// packs never cost a ready snapshot an object; and after the last sweep
// every pack in the bucket holds an object a ready snapshot names.
func TestBucketFreeingWithPacks(t *testing.T) {
	f := newPackFixture(t)
	f.smallFiles("a", 100, 1)
	f.smallFiles("shared", 50, 101)
	if err := f.take("snaaaaaaaaaaaa"); err != nil {
		t.Fatal(err)
	}
	f.keptWhole("after the first take", "snaaaaaaaaaaaa")

	// A take killed while it puts its packs: nothing it put is recorded.
	if err := os.RemoveAll(filepath.Join(f.b.BoxDir(f.g), "a")); err != nil {
		t.Fatal(err)
	}
	f.smallFiles("b", 100, 151)
	f.write("b/big1.bin", 12<<20, 7)
	f.write("b/big2.bin", 12<<20, 8)
	f.objs.kill(1)
	if err := f.take("snbbbbbbbbbbbb"); err == nil {
		t.Fatal("a take killed while putting its packs answered ready")
	}
	f.objs.kill(0)
	if n, err := f.ledger.Sweep(f.ctx, f.bucket); err != nil || n != 0 {
		t.Fatalf("a sweep while a take's claims run freed %d (%v); want nothing", n, err)
	}
	f.keptWhole("after a sweep beside a killed take", "snaaaaaaaaaaaa")
	// Taken again at once, it ships what the killed put did not.
	if err := f.take("snbbbbbbbbbbbb"); err != nil {
		t.Fatalf("the killed take, taken again: %v", err)
	}
	f.keptWhole("after the killed take was taken again", "snaaaaaaaaaaaa", "snbbbbbbbbbbbb")
	// The pack whose put was killed holds nothing: it goes once its
	// claim runs out.
	f.runOutAllClaims()
	if n, err := f.ledger.Sweep(f.ctx, f.bucket); err != nil || n == 0 {
		t.Fatalf("a sweep after the killed take's claims ran out freed %d (%v); want the pack whose put was killed", n, err)
	}
	f.keptWhole("after the killed put's pack was freed", "snaaaaaaaaaaaa", "snbbbbbbbbbbbb")

	// The first snapshot deleted: its pack still holds the shared files
	// the second names. A sweep killed after its pack deletes frees
	// nothing it should not, and the next one finishes.
	if err := f.b.DeleteSnapshot(f.ctx, providers.SnapshotRef{Ref: "snaaaaaaaaaaaa", ID: "snaaaaaaaaaaaa", Guest: f.g}, nil); err != nil {
		t.Fatal(err)
	}
	f.runOutAllClaims()
	f.ledger.hooks.deletedPacks = func() error { return errKilled }
	if _, err := f.ledger.Sweep(f.ctx, f.bucket); !errors.Is(err, errKilled) && err != nil {
		t.Fatalf("the killed sweep answered %v", err)
	}
	f.ledger.hooks.deletedPacks = nil
	f.keptWhole("after a sweep killed while deleting packs", "snbbbbbbbbbbbb")
	f.runOutAllClaims()
	if _, err := f.ledger.Sweep(f.ctx, f.bucket); err != nil {
		t.Fatal(err)
	}
	f.keptWhole("after the last sweep", "snbbbbbbbbbbbb")

	// Every pack left holds an object the ready snapshot names; nothing is
	// left that nothing names.
	named := keys(f.named("snbbbbbbbbbbbb"))
	holding := map[string]bool{}
	if err := f.ledger.Locate(f.ctx, named, func(_, pack string, _, _, _ int64) { holding[pack] = true }); err != nil {
		t.Fatal(err)
	}
	for k := range f.inBucket() {
		if strings.HasPrefix(k, "packs/") && !holding[k] {
			t.Fatalf("after the last sweep pack %s holds nothing the ready snapshot names", k)
		}
		if strings.HasPrefix(k, "content/") {
			t.Fatalf("object %s was put on its own, not in a pack", k)
		}
	}
	if objects, unnamed, _ := f.ledger.Counts(f.ctx); unnamed != 0 || objects != int64(len(named)) {
		t.Fatalf("the ledger records %d objects, %d unnamed; want %d, none", objects, unnamed, len(named))
	}
	packs, size, held, err := f.ledger.PackWaste(f.ctx)
	if err != nil || held >= size {
		t.Fatalf("the packs hold %d of their %d bytes (%v); want the freed files' bytes counted as waste", held, size, err)
	}
	t.Logf("%d packs, %d bytes, %d held by stored objects: %d bytes of waste", packs, size, held, size-held)

	// What the ready snapshot names is whole: a second host forks it.
	other, _ := f.otherHost()
	g, err := other.ForkSnapshot(f.ctx, providers.SnapshotRef{Ref: "snbbbbbbbbbbbb", ID: "snbbbbbbbbbbbb"},
		providers.BoxIdentity{ID: "bxforkedthere1", Kind: "linux"}, nil)
	if err != nil {
		t.Fatalf("fork on the other host after the sweeps: %v", err)
	}
	sameTree(t, "the fork on the other host", f.b.BoxDir(f.g), other.BoxDir(g))
}

// TestStoredObjectStaysInItsPack: two takes that put the same object in
// packs of their own at once: it lies in the first pack recorded, and a
// later record does not move it, so a fetch that located it there reads a
// pack the sweep keeps while the object is stored.
func TestStoredObjectStaysInItsPack(t *testing.T) {
	ctx := t.Context()
	l := New(dbtest.New(t))
	key := "content/ab/" + strings.Repeat("c", 62)
	if _, err := l.Claim(ctx, []string{key}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"packs/00/first", "packs/00/second"} {
		if err := l.ClaimPack(ctx, p, 100); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.StoredPack(ctx, "packs/00/first", []string{key}, []int64{0}, []int64{10}); err != nil {
		t.Fatal(err)
	}
	if err := l.StoredPack(ctx, "packs/00/second", []string{key}, []int64{50}, []int64{10}); err != nil {
		t.Fatal(err)
	}
	var in string
	if err := l.Locate(ctx, []string{key}, func(_, pack string, _, _, _ int64) { in = pack }); err != nil {
		t.Fatal(err)
	}
	if in != "packs/00/first" {
		t.Fatalf("the object lies in %q; want the first pack recorded", in)
	}
}

// spoilInPack flips a byte of the content object key (the box's file
// rel) where the ledger places it in its pack in the bucket, so what the
// pack holds no longer matches the object's hash.
func (f *fixture) spoilInPack(t *testing.T, key, rel string) (pack string) {
	t.Helper()
	var off int64
	if err := f.ledger.Locate(f.ctx, []string{key}, func(_, p string, o, _, _ int64) { pack, off = p, o }); err != nil || pack == "" {
		t.Fatalf("%s lies in no pack (%v)", rel, err)
	}
	var b bytes.Buffer
	if err := f.bucket.Get(f.ctx, pack, "", &b); err != nil {
		t.Fatal(err)
	}
	p := b.Bytes()
	p[off+10] ^= 0xff
	if err := f.bucket.Put(f.ctx, pack, bytes.NewReader(p), int64(len(p))); err != nil {
		t.Fatal(err)
	}
	return pack
}
