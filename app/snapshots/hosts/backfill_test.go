package hosts_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/contentledger"
	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/jobs"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local"
	"github.com/boxsnap/boxsnap/providers/local/objstore"
	"github.com/boxsnap/boxsnap/providers/local/objstore/s3test"
	"github.com/boxsnap/boxsnap/providers/local/ship"
)

// TestBackfillShipsSnapshotsFromBeforeTheStore: a snapshot taken on host-a
// with no content store is on host-a alone: once a store is set, host-a
// counts it as not in the bucket yet and a move of its box to host-b is
// refused in words saying so and what happens next, changing nothing; the
// periodic hosts job puts host-a's own work on host-a's queue, which ships
// it, recorded in the ledger as a take's shipping is; then the move
// restores it on host-b byte-exact.
func TestBackfillShipsSnapshotsFromBeforeTheStore(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.New(t)
	rootA := t.TempDir()
	_ = local.Passable(rootA, os.TempDir())
	build := func(host, root string, remote *ship.Remote) *coretest.Env {
		e, err := coretest.Build(ctx, pool, coretest.Options{Host: host, LocalRoot: root, ContentStore: remote})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.Stop)
		return e
	}
	before := build("host-a", rootA, nil)
	box := before.Box(t, snapshots.Owner(), "amber-fox")
	data := []byte(strings.Repeat("taken before the content store\n", 4096))
	if err := os.WriteFile(filepath.Join(before.Local.BoxDir(providers.Guest{Ref: box.GuestRef}), "notes.txt"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	sn := before.TakeReady(t, snapshots.Owner(), "amber-fox", "before")
	before.Stop()

	srv := s3test.Start(t)
	bucket, err := objstore.Open(srv.Bucket(t))
	if err != nil {
		t.Fatal(err)
	}
	ledger := contentledger.New(pool)
	remote := &ship.Remote{Objects: bucket, Keys: bucket.Config(), Ledger: ledger}
	a := build("host-a", rootA, remote)
	rootB := t.TempDir()
	_ = local.Passable(rootB, os.TempDir())
	b := build("host-b", rootB, remote)

	if words, err := a.Hosts.Backlog(ctx); err != nil || !strings.HasPrefix(words, "1 snapshot on this host is not in the content store yet") {
		t.Fatalf("host-a's snapshots not in the bucket: %q %v, want 1", words, err)
	}
	_, err = b.Hosts.Move(ctx, snapshots.Owner(), "amber-fox", "host-b")
	rf, ok := snapshots.AsRefusal(err)
	want := "amber-fox's newest snapshot ‘before’ is not in the content store yet: it was taken before the store was set. Host host-a ships it within 5 minutes, oldest first; move the box once it is there."
	if !ok || rf.Words != want {
		t.Fatalf("move of a box whose snapshot is on host-a alone: %v, want %q", err, want)
	}
	if got := ownerOf(t, pool, "amber-fox"); got != "host-a" {
		t.Fatalf("after the refused move the box is on %q", got)
	}

	// What the periodic "hosts" job does when its time comes.
	if _, err := a.Client.Insert(ctx, jobs.SweepArgs{Name: "hosts"}, nil); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		n, err := a.Hosts.Unshipped(ctx)
		if err == nil && n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("host-a's snapshot was not shipped within 60 s: %d left, %v", n, err)
		}
	}
	keys, err := ledger.NamedBy(ctx, sn.Ref)
	if err != nil || len(keys) == 0 {
		t.Fatalf("the ledger names nothing for the shipped snapshot: %v %v", keys, err)
	}

	op, err := b.Hosts.Move(ctx, snapshots.Owner(), "amber-fox", "host-b")
	if err != nil {
		t.Fatalf("move once shipped: %v", err)
	}
	if got := b.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("move's restore: %s %s", got.State, coretest.Deref(got.Error))
	}
	got, err := os.ReadFile(filepath.Join(b.Local.BoxDir(providers.Guest{Ref: box.GuestRef}), "notes.txt"))
	if err != nil || string(got) != string(data) {
		t.Fatalf("on host-b: %d bytes, %v; want the %d bytes taken on host-a", len(got), err, len(data))
	}
}
