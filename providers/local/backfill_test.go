package local

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/objstore"
	"github.com/boxsnap/boxsnap/providers/local/objstore/s3test"
	"github.com/boxsnap/boxsnap/providers/local/ship"
)

// TestBackfillOldestFirstBoundedResumable: three snapshots taken with no
// content store are shipped once one is set, oldest first and at most as
// many as asked per run; a run killed half way through a snapshot's puts
// ships nothing of it as whole, and the next run ships it and the rest;
// then another host forks the newest byte-exact from the bucket.
func TestBackfillOldestFirstBoundedResumable(t *testing.T) {
	root := t.TempDir()
	plain, err := New(Config{Root: root, Install: "in-test", NoSync: true, StopTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	unmountAtEnd(t, plain)
	g, err := plain.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxbackfill0001", Kind: "linux"}})
	if err != nil {
		t.Fatal(err)
	}
	e := env{b: plain, g: g, dir: plain.BoxDir(g), ctx: t.Context()}
	var refs []providers.SnapshotRef
	var last []byte
	for i := range 3 {
		last = randomBytes(t, (i+1)<<20)
		if err := os.WriteFile(filepath.Join(e.dir, "data.bin"), last, 0o644); err != nil {
			t.Fatal(err)
		}
		_, ref := e.take(t)
		refs = append(refs, ref)
	}

	srv := s3test.Start(t)
	cfg := srv.Bucket(t)
	bucket, err := objstore.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	objs := &countingObjects{Objects: bucket}
	stored, err := New(Config{Root: root, Install: "in-test", NoSync: true, StopTimeout: 2 * time.Second,
		ContentStore: &ship.Remote{Objects: objs, Keys: cfg}})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := stored.UnshippedSnapshots(t.Context()); err != nil || n != 3 {
		t.Fatalf("before the backfill: %d not in the bucket (%v), want 3", n, err)
	}
	objs.reset(1) // killed after the first put
	if shipped, left, err := stored.ShipUnshipped(t.Context(), 1); !errors.Is(err, errKilled) || shipped != 0 || left != 3 {
		t.Fatalf("a run killed half way: shipped %d, left %d, %v; want 0, 3 and the kill", shipped, left, err)
	}
	objs.reset(0)
	if shipped, left, err := stored.ShipUnshipped(t.Context(), 1); err != nil || shipped != 1 || left != 2 {
		t.Fatalf("a run of at most 1: shipped %d, left %d, %v; want 1, 2", shipped, left, err)
	}
	if !stored.shipper.Shipped(refs[0].ID) || stored.shipper.Shipped(refs[1].ID) {
		t.Fatalf("the first run did not ship the oldest snapshot first")
	}
	if shipped, left, err := stored.ShipUnshipped(t.Context(), 10); err != nil || shipped != 2 || left != 0 {
		t.Fatalf("the next run: shipped %d, left %d, %v; want 2, 0", shipped, left, err)
	}
	for _, ref := range refs {
		if in, err := stored.InContentStore(t.Context(), ref); err != nil || !in {
			t.Fatalf("snapshot %s is not in the content store after the backfill: %v", ref.ID, err)
		}
	}

	other, err := New(Config{Root: t.TempDir(), Install: "in-test", NoSync: true, StopTimeout: 2 * time.Second,
		ContentStore: &ship.Remote{Objects: bucket, Keys: cfg}})
	if err != nil {
		t.Fatal(err)
	}
	unmountAtEnd(t, other)
	fg, err := other.ForkSnapshot(t.Context(), refs[2], providers.BoxIdentity{ID: "bxbackfill0002", Kind: "linux"}, nil)
	if err != nil {
		t.Fatalf("fork on the other host: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(other.BoxDir(fg), "data.bin")); !bytes.Equal(got, last) {
		t.Fatalf("the snapshot forked on the other host is not byte-exact")
	}
}
