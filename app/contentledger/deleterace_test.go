package contentledger_test

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/boxsnap/boxsnap/app/contentledger"
	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local"
	"github.com/boxsnap/boxsnap/providers/local/objstore"
	"github.com/boxsnap/boxsnap/providers/local/objstore/s3test"
	"github.com/boxsnap/boxsnap/providers/local/ship"
)

// TestDeleteRacesATakeOfTheSameContent: on host-a, the delete of the only
// snapshot naming some content runs at the same time as a take of another
// box holding that same content, round after round, while the ledger's
// sweep runs over and over; once every claim has run out, a last sweep
// frees what nothing names, and each other box's snapshot is still whole
// in the bucket: moved to host-b, it is restored there byte-exact from
// the bucket.
func TestDeleteRacesATakeOfTheSameContent(t *testing.T) {
	ctx := t.Context()
	pool := dbtest.New(t)
	srv := s3test.Start(t)
	bucket, err := objstore.Open(srv.Bucket(t))
	if err != nil {
		t.Fatal(err)
	}
	ledger := contentledger.New(pool)
	remote := &ship.Remote{Objects: bucket, Keys: bucket.Config(), Ledger: ledger}
	mk := func(host string) *coretest.Env {
		root := t.TempDir()
		_ = local.Passable(root, os.TempDir())
		e, err := coretest.Build(ctx, pool, coretest.Options{Host: host, LocalRoot: root, ContentStore: remote})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.Stop)
		return e
	}
	a, b := mk("host-a"), mk("host-b")
	// The sweep runs all along, as any process's periodic one may, so it
	// may come between a take's asking what is stored and its naming.
	sweeping, swept := make(chan struct{}), make(chan error, 1)
	go func() {
		for {
			if _, err := ledger.Sweep(ctx, bucket); err != nil {
				swept <- err
				return
			}
			select {
			case <-sweeping:
				swept <- nil
				return
			default:
			}
		}
	}()
	const rounds = 4
	want := map[string][]byte{}
	for i := range rounds {
		shared := make([]byte, 64<<10+i)
		_, _ = rand.Read(shared)
		gone, kept := fmt.Sprintf("gone-%d", i), fmt.Sprintf("kept-%d", i)
		for _, name := range []string{gone, kept} {
			bx := a.Box(t, snapshots.Owner(), name)
			if err := os.WriteFile(filepath.Join(a.Local.BoxDir(providers.Guest{Ref: bx.GuestRef}), "shared.bin"), shared, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want[kept] = shared
		sn := a.TakeReady(t, snapshots.Owner(), gone, "to delete")
		del, err := a.Keeps.Delete(ctx, snapshots.Owner(), snapshots.DeleteRequest{Box: gone, Snapshot: sn.ID})
		if err != nil {
			t.Fatal(err)
		}
		take, _, err := a.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: kept, Name: "kept"})
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range []*snapshots.Operation{del, take} {
			if got := a.Wait(t, op); got.State != snapshots.OpDone {
				t.Fatalf("round %d: %s: %s %s", i, got.Kind, got.State, coretest.Deref(got.Error))
			}
		}
	}
	close(sweeping)
	if err := <-swept; err != nil {
		t.Fatalf("a sweep during the rounds: %v", err)
	}
	if _, err := pool.Exec(ctx, `UPDATE content_objects SET claimed_until = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	if _, err := ledger.Sweep(ctx, bucket); err != nil {
		t.Fatalf("sweep: %v", err)
	}
	for name, data := range want {
		op, err := b.Hosts.Move(ctx, snapshots.Owner(), name, "host-b")
		if err != nil {
			t.Fatalf("move %s: %v", name, err)
		}
		if got := b.Wait(t, op); got.State != snapshots.OpDone {
			t.Fatalf("%s's move from the bucket after the sweep: %s %s", name, got.State, coretest.Deref(got.Error))
		}
		bx, err := b.Core.Box(ctx, snapshots.Owner(), name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(b.Local.BoxDir(providers.Guest{Ref: bx.GuestRef}), "shared.bin"))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%s on host-b: %d bytes, %v; want the %d taken on host-a", name, len(got), err, len(data))
		}
	}
}
