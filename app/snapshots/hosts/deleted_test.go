package hosts_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local"
	"github.com/boxsnap/boxsnap/providers/local/objstore"
	"github.com/boxsnap/boxsnap/providers/local/objstore/s3test"
	"github.com/boxsnap/boxsnap/providers/local/ship"
)

// twoHosts starts two cores on one database and one bucket, each with its
// own data folder: host-a and host-b, with extra options o.
func twoHosts(t *testing.T, o coretest.Options) (a, b *coretest.Env) {
	t.Helper()
	srv := s3test.Start(t)
	cfg := srv.Bucket(t)
	bucket, err := objstore.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	remote := &ship.Remote{Objects: bucket, Keys: bucket.Config()}
	pool := dbtest.New(t)
	mk := func(host string) *coretest.Env {
		root := t.TempDir()
		_ = local.Passable(root, os.TempDir())
		opts := o
		opts.Host, opts.LocalRoot, opts.ContentStore = host, root, remote
		e, err := coretest.Build(context.Background(), pool, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.Stop)
		return e
	}
	return mk("host-a"), mk("host-b")
}

// A snapshot deleted on its host, or being deleted, is missing on every
// other host too, in the words a snapshot never taken gets, though its
// objects wait in the bucket for the sweep; a ready one is fetched.
func TestDeletedSnapshotStaysDeletedOnAnotherHost(t *testing.T) {
	ctx := context.Background()
	a, b := twoHosts(t, coretest.Options{})
	box := a.Box(t, snapshots.Owner(), "amber-fox")
	gone := a.TakeReady(t, snapshots.Owner(), "amber-fox", "gone")
	deleting := a.TakeReady(t, snapshots.Owner(), "amber-fox", "deleting")
	kept := a.TakeReady(t, snapshots.Owner(), "amber-fox", "kept")
	op, err := a.Keeps.Delete(ctx, snapshots.Owner(), snapshots.DeleteRequest{Box: box.ID, Snapshot: gone.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("delete: %s %s", got.State, coretest.Deref(got.Error))
	}
	if _, err := a.Pool.Exec(ctx, "UPDATE snapshots SET state = 'deleting' WHERE id = $1", deleting.ID); err != nil {
		t.Fatal(err)
	}
	fork := func(sn *snapshots.Snapshot, id string) error {
		ref := snapshots.RefOf(sn, box)
		_, err := b.Local.ForkSnapshot(ctx, ref, providers.BoxIdentity{ID: id, Name: id, Kind: box.Kind}, nil)
		return err
	}
	never := *kept
	never.Ref = "sn0never0taken"
	missing := fork(&never, "bx0never")
	if !errors.Is(missing, providers.ErrNotFound) {
		t.Fatalf("a snapshot never taken: %v", missing)
	}
	for _, sn := range []*snapshots.Snapshot{gone, deleting} {
		err := fork(sn, "bx0"+sn.Name)
		if !errors.Is(err, providers.ErrNotFound) {
			t.Fatalf("snapshot %s on host-b: %v, want it missing", sn.Name, err)
		}
		if want := strings.ReplaceAll(missing.Error(), never.Ref, sn.Ref); err.Error() != want {
			t.Fatalf("snapshot %s on host-b: %q, want the words a missing snapshot gets, %q", sn.Name, err, want)
		}
		if _, err := os.Stat(b.Local.SnapDir(sn.Ref)); err == nil {
			t.Fatalf("snapshot %s was fetched onto host-b", sn.Name)
		}
	}
	if err := fork(kept, "bx0kept"); err != nil {
		t.Fatalf("a ready snapshot on host-b: %v", err)
	}
}
