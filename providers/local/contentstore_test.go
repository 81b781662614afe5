package local

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/objstore"
	"github.com/boxsnap/boxsnap/providers/local/objstore/s3test"
	"github.com/boxsnap/boxsnap/providers/local/ship"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// countingObjects is the real bucket, counting the puts and failing them
// once failAfter of them went through (a take killed half way).
type countingObjects struct {
	objstore.Objects
	mu        sync.Mutex
	puts      []string // the keys put whole
	tries     int
	failAfter int // 0: never
	gets      int
	getsFail  error // every get fails with it when set
}

func (c *countingObjects) Get(ctx context.Context, key, sum string, w io.Writer) error {
	c.mu.Lock()
	c.gets++
	fail := c.getsFail
	c.mu.Unlock()
	if fail != nil {
		return fail
	}
	return c.Objects.Get(ctx, key, sum, w)
}

var errKilled = errors.New("killed half way through shipping")

func (c *countingObjects) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	c.mu.Lock()
	c.tries++
	if c.failAfter > 0 && c.tries > c.failAfter {
		c.mu.Unlock()
		return errKilled
	}
	c.mu.Unlock()
	if err := c.Objects.Put(ctx, key, r, size); err != nil {
		return err
	}
	c.mu.Lock()
	c.puts = append(c.puts, key)
	c.mu.Unlock()
	return nil
}

func (c *countingObjects) reset(failAfter int) {
	c.mu.Lock()
	c.puts, c.tries, c.failAfter = nil, 0, failAfter
	c.mu.Unlock()
}

// setupStored is a backend whose snapshots are kept in a bucket of a real
// versitygw too, and the bucket's client.
func setupStored(t *testing.T, cacheBytes ...int64) (env, *countingObjects, *objstore.Bucket) {
	t.Helper()
	srv := s3test.Start(t)
	cfg := srv.Bucket(t)
	bucket, err := objstore.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	objs := &countingObjects{Objects: bucket}
	b, err := New(Config{Root: t.TempDir(), Install: "in-test", NoSync: true, StopTimeout: 2 * time.Second,
		ContentStore: &ship.Remote{Objects: objs, Keys: cfg}, ContentCacheBytes: sum(cacheBytes)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	unmountAtEnd(t, b)
	box := "bx" + store.RandomSuffix()[:12]
	g, err := b.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: box, Kind: "linux"}})
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	return env{b: b, g: g, dir: b.BoxDir(g), ctx: t.Context()}, objs, bucket
}

// otherHost is another host's backend on the bucket setupStored made: a
// root and an empty cache of its own, the same bucket through objs. tune,
// if any, sets more of its Config.
func otherHost(t *testing.T, objs *countingObjects, bucket *objstore.Bucket, tune ...func(*Config)) *Backend {
	t.Helper()
	cfg := Config{Root: t.TempDir(), Install: "in-test", NoSync: true, StopTimeout: 2 * time.Second,
		ContentStore: &ship.Remote{Objects: objs, Keys: bucket.Config()}}
	for _, f := range tune {
		f(&cfg)
	}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	unmountAtEnd(t, b)
	return b
}

// writeFiles writes each of files (a path under dir, and its bytes) with
// perm, making the folders they are in.
func writeFiles(t *testing.T, dir string, files map[string][]byte, perm os.FileMode) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, perm); err != nil {
			t.Fatal(err)
		}
	}
}

// inBucket lists what snapshot id names that the bucket lacks: its
// manifest, each small file's content, each large file's chunk list and
// every chunk on it.
func inBucket(t *testing.T, b *Backend, bucket *objstore.Bucket, id string) []string {
	t.Helper()
	ctx := t.Context()
	keys := bucket.Config()
	var lacking []string
	has := func(key string) bool {
		_, ok, err := bucket.Head(ctx, key)
		if err != nil {
			t.Fatalf("head %s: %v", key, err)
		}
		if !ok {
			lacking = append(lacking, key)
		}
		return ok
	}
	has(keys.ManifestKey(id))
	m, err := b.Manifest(id)
	if err != nil {
		t.Fatal(err)
	}
	for h, size := range m.Hashes() {
		if size <= ship.ChunkAbove {
			has(keys.ContentKey(h))
			continue
		}
		if !has(keys.ListKey(h)) {
			continue
		}
		var list bytes.Buffer
		if err := bucket.Get(ctx, keys.ListKey(h), "", &list); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(list.String()), "\n") {
			sum, _, _ := strings.Cut(line, " ")
			has(keys.ContentKey(sum))
		}
	}
	return lacking
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	p := make([]byte, n)
	if _, err := rand.Read(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSnapshotShippedBeforeReady: with a content store, a take answers
// (the snapshot is ready) only once its manifest and every object it names
// are in the bucket; a take killed half way through shipping is not ready
// and its manifest is not in the bucket, and taken again it ships the rest
// and never an object twice; a small change to a large file ships only
// the chunks it touched.
func TestSnapshotShippedBeforeReady(t *testing.T) {
	e, objs, bucket := setupStored(t)
	e.write(t, "a.txt", "alpha")
	e.write(t, "dir/b.txt", "beta")
	big := randomBytes(t, 12<<20)
	if err := os.WriteFile(filepath.Join(e.dir, "big.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}

	// Killed after three objects: the take fails, the snapshot is not ready.
	objs.reset(3)
	lab := providers.Label{Box: e.g.Ref, Snapshot: "sn" + store.RandomSuffix()[:12]}
	_, err := e.b.Snapshot(e.ctx, e.g, providers.SnapshotTake{Label: lab}, nil)
	if err == nil || !strings.Contains(err.Error(), "is kept on this host but not yet in the content store, so it is not ready") {
		t.Fatalf("a take killed while shipping answered %v; want it not ready", err)
	}
	if _, ok, _ := bucket.Head(e.ctx, bucket.Config().ManifestKey(lab.Snapshot)); ok {
		t.Fatalf("the manifest is in the bucket before every object it names")
	}
	if h, ok := e.held(t, lab.Snapshot); !ok || !h.Incomplete || !h.Unshipped || !strings.Contains(h.Error, "not yet wholly in the content store") {
		t.Fatalf("a snapshot killed while shipping is held as %+v; want it incomplete, unshipped, not yet in the content store", h)
	}
	firstPuts := append([]string(nil), objs.puts...)

	// Taken again (the step resumed): it ships the rest, then answers.
	objs.reset(0)
	taken, err := e.b.Snapshot(e.ctx, e.g, providers.SnapshotTake{Label: lab}, nil)
	if err != nil {
		t.Fatalf("the resumed take: %v", err)
	}
	if lacking := inBucket(t, e.b, bucket, taken.Ref); len(lacking) > 0 {
		t.Fatalf("snapshot %s answered ready, but the bucket lacks %v", taken.Ref, lacking)
	}
	if h, ok := e.held(t, lab.Snapshot); !ok || h.Incomplete {
		t.Fatalf("the shipped snapshot is held as %+v; want it whole", h)
	}
	for _, k := range objs.puts {
		for _, f := range firstPuts {
			if k == f {
				t.Errorf("the resumed take put %s again", k)
			}
		}
	}
	chunks := 0
	for _, k := range append(firstPuts, objs.puts...) {
		if strings.Contains(k, "/content/") || strings.HasPrefix(k, "content/") {
			chunks++
		}
	}
	if chunks < 2+5 {
		t.Errorf("a 12 MiB file and two small ones shipped as %d content objects; want the large one in chunks of about 1 MiB", chunks)
	}

	// One byte changed in the middle of the large file: only its chunks.
	big[6<<20] ^= 0xff
	if err := os.WriteFile(filepath.Join(e.dir, "big.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	objs.reset(0)
	taken2, _ := e.take(t)
	if lacking := inBucket(t, e.b, bucket, taken2.Ref); len(lacking) > 0 {
		t.Fatalf("snapshot %s answered ready, but the bucket lacks %v", taken2.Ref, lacking)
	}
	if n := len(objs.puts); n > 5 {
		t.Errorf("one byte changed in a 12 MiB file shipped %d objects (%v); want its one or two chunks, its list and the manifest", n, objs.puts)
	}
}

// TestCorruptObjectMarksDamaged: a restore that must fetch content the
// host lacks checks each object by its hash; a corrupt one, and one
// missing from the bucket, each mark their snapshot damaged and the
// restore refuses before changing anything. Whole objects restore
// byte-exact.
func TestCorruptObjectMarksDamaged(t *testing.T) {
	e, _, bucket := setupStored(t)
	small := randomBytes(t, 64<<10)
	big := randomBytes(t, 9<<20)
	if err := os.WriteFile(filepath.Join(e.dir, "small.bin"), small, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.dir, "big.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	_, ref := e.take(t)
	m, err := e.b.Manifest(ref.Ref)
	if err != nil {
		t.Fatal(err)
	}
	// This host's cache loses the snapshot's content.
	dropContent := func() {
		for h := range m.Hashes() {
			if err := os.Remove(e.b.ContentPath(h)); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
		}
	}
	dropContent()
	e.write(t, "small.bin", "changed since")
	if err := e.restore(t, ref); err != nil {
		t.Fatalf("a restore fetching whole objects: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(e.dir, "big.bin")); !bytes.Equal(got, big) {
		t.Fatalf("big.bin restored from the bucket is not byte-exact")
	}
	if got, _ := os.ReadFile(filepath.Join(e.dir, "small.bin")); !bytes.Equal(got, small) {
		t.Fatalf("small.bin restored from the bucket is not byte-exact")
	}

	// The small file's object corrupt in the bucket.
	var smallHash string
	for h, size := range m.Hashes() {
		if size == int64(len(small)) {
			smallHash = h
		}
	}
	keys := bucket.Config()
	bad := []byte("not what was shipped")
	if err := bucket.Put(e.ctx, keys.ContentKey(smallHash), bytes.NewReader(bad), int64(len(bad))); err != nil {
		t.Fatal(err)
	}
	dropContent()
	e.write(t, "small.bin", "changed again")
	before := listing(t, e.dir)
	err = e.restore(t, ref)
	if err == nil || !strings.Contains(err.Error(), "does not match its hash: the snapshot is damaged") || !strings.Contains(err.Error(), "Nothing was changed.") {
		t.Fatalf("a restore with a corrupt object answered %v; want it refused, the snapshot damaged", err)
	}
	if !errors.Is(err, providers.ErrRefused) {
		t.Errorf("%v is not a refusal", err)
	}
	if after := listing(t, e.dir); after != before {
		t.Fatalf("the refused restore changed the box:\nbefore %s\nafter %s", before, after)
	}
	h, ok := e.held(t, ref.Ref)
	if !ok || !h.Incomplete || !strings.Contains(h.Error, "damaged") {
		t.Fatalf("the snapshot is held as %+v; want it incomplete, damaged", h)
	}

	// Another snapshot, its new content then missing from the bucket: its
	// restore refuses alike, and it is marked damaged.
	e.write(t, "new.bin", string(randomBytes(t, 48<<10)))
	_, ref2 := e.take(t)
	m2, err := e.b.Manifest(ref2.Ref)
	if err != nil {
		t.Fatal(err)
	}
	old := m.Hashes()
	removed := 0
	for h := range m2.Hashes() {
		if _, ok := old[h]; ok {
			continue
		}
		if err := bucket.Delete(e.ctx, keys.ContentKey(h)); err != nil {
			t.Fatal(err)
		}
		removed++
	}
	if removed == 0 {
		t.Fatal("the second snapshot holds no content of its own: nothing here is tested")
	}
	for h := range m2.Hashes() {
		if err := os.Remove(e.b.ContentPath(h)); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	e.write(t, "new.bin", "changed since the second")
	before = listing(t, e.dir)
	err = e.restore(t, ref2)
	if err == nil || !strings.Contains(err.Error(), "that this snapshot names: the snapshot is damaged") || !strings.Contains(err.Error(), "Nothing was changed.") {
		t.Fatalf("a restore with a missing object answered %v; want it refused, the snapshot damaged", err)
	}
	if !errors.Is(err, providers.ErrRefused) {
		t.Errorf("%v is not a refusal", err)
	}
	if after := listing(t, e.dir); after != before {
		t.Fatalf("the refused restore changed the box:\nbefore %s\nafter %s", before, after)
	}
	if h, ok := e.held(t, ref2.Ref); !ok || !h.Incomplete || !strings.Contains(h.Error, "damaged") {
		t.Fatalf("the snapshot missing an object is held as %+v; want it incomplete, damaged", h)
	}
}

func sum(ns []int64) int64 {
	var t int64
	for _, n := range ns {
		t += n
	}
	return t
}

func contentBytes(t *testing.T, b *Backend) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(b.Path(store.DirContent), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			fi, err := d.Info()
			if err == nil {
				n += fi.Size()
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestContentCacheBounded: with a content store the host's content is a
// cache kept under its bound once a take has shipped; a shipped snapshot
// whose content left the host is still whole, and its restore, a read of
// one of its files and a fork fetch what they need, byte-exact.
func TestContentCacheBounded(t *testing.T) {
	const bound = 1 << 20
	e, _, _ := setupStored(t, bound)
	files := map[string][]byte{}
	for _, name := range []string{"a.bin", "b.bin", "c.bin", "d.bin"} {
		files[name] = randomBytes(t, 600<<10)
		if err := os.WriteFile(filepath.Join(e.dir, name), files[name], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, ref := e.take(t)
	if n := contentBytes(t, e.b); n > bound {
		t.Fatalf("after the take the host keeps %d bytes of content; its bound is %d", n, bound)
	}
	if h, ok := e.held(t, ref.Ref); !ok || h.Incomplete {
		t.Fatalf("a shipped snapshot whose content left the host is held as %+v; want it whole", h)
	}
	var got bytes.Buffer
	if _, err := e.b.ReadFile(e.ctx, ref, "c.bin", &got); err != nil || !bytes.Equal(got.Bytes(), files["c.bin"]) {
		t.Fatalf("reading c.bin of the snapshot: %v (byte-exact %v)", err, bytes.Equal(got.Bytes(), files["c.bin"]))
	}
	for name := range files {
		e.write(t, name, "changed")
	}
	if err := e.restore(t, ref); err != nil {
		t.Fatalf("restore: %v", err)
	}
	for name, want := range files {
		if got, _ := os.ReadFile(filepath.Join(e.dir, name)); !bytes.Equal(got, want) {
			t.Fatalf("%s restored from the bucket is not byte-exact", name)
		}
	}
}

// TestForkOnAnotherHostFromTheBucket: a snapshot taken on one host is
// forked on another that shares only the bucket: its manifest, label and
// content come from the bucket, byte-exact; a snapshot the bucket lacks
// is not found.
func TestForkOnAnotherHostFromTheBucket(t *testing.T) {
	e, objs, bucket := setupStored(t)
	small := randomBytes(t, 10<<10)
	big := randomBytes(t, 7<<20)
	if err := os.WriteFile(filepath.Join(e.dir, "small.bin"), small, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.dir, "big.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("small.bin", filepath.Join(e.dir, "link")); err != nil {
		t.Fatal(err)
	}
	_, ref := e.take(t)

	other := otherHost(t, objs, bucket)
	g, err := other.ForkSnapshot(e.ctx, ref, providers.BoxIdentity{ID: "bxforkedthere1", Kind: "linux"}, nil)
	if err != nil {
		t.Fatalf("fork on the other host: %v", err)
	}
	dir := other.BoxDir(g)
	if got, _ := os.ReadFile(filepath.Join(dir, "big.bin")); !bytes.Equal(got, big) {
		t.Fatalf("big.bin forked on the other host is not byte-exact")
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "small.bin")); !bytes.Equal(got, small) {
		t.Fatalf("small.bin forked on the other host is not byte-exact")
	}
	if target, err := os.Readlink(filepath.Join(dir, "link")); err != nil || target != "small.bin" {
		t.Fatalf("the link forked on the other host reads %q (%v)", target, err)
	}
	_, err = other.ForkSnapshot(e.ctx, providers.SnapshotRef{Ref: "snnotinbucket1", ID: "snnotinbucket1"}, providers.BoxIdentity{ID: "bxforkedthere2", Kind: "linux"}, nil)
	if !errors.Is(err, providers.ErrNotFound) {
		t.Fatalf("a fork of a snapshot the bucket lacks answered %v; want not found", err)
	}
}

// TestUnreachableStoreStopsTheFetch: a restore that must fetch from a
// content store that does not answer stops at the first failure, says so,
// and changes nothing; it does not try every object first.
func TestUnreachableStoreStopsTheFetch(t *testing.T) {
	e, objs, _ := setupStored(t)
	const files = 300
	for i := range files {
		e.write(t, fmt.Sprintf("f%03d.txt", i), fmt.Sprintf("file %d", i))
	}
	_, ref := e.take(t)
	m, err := e.b.Manifest(ref.Ref)
	if err != nil {
		t.Fatal(err)
	}
	for h := range m.Hashes() {
		_ = os.Remove(e.b.ContentPath(h))
	}
	for i := range files {
		e.write(t, fmt.Sprintf("f%03d.txt", i), "changed")
	}
	before := listing(t, e.dir)
	objs.mu.Lock()
	objs.getsFail = fmt.Errorf("the content store at 127.0.0.1:1 does not answer: %w", providers.ErrUnreachable)
	objs.mu.Unlock()
	err = e.restore(t, ref)
	if !errors.Is(err, providers.ErrUnreachable) || !strings.Contains(err.Error(), "does not answer") {
		t.Fatalf("a restore with the store unreachable answered %v", err)
	}
	if after := listing(t, e.dir); after != before {
		t.Fatalf("the refused restore changed the box")
	}
	if objs.gets < 1 || objs.gets >= files/2 {
		t.Fatalf("the fetch tried %d of %d objects after the store failed; want it to stop at the first failures", objs.gets, files)
	}
}
