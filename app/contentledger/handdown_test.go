package contentledger

import (
	"errors"
	"slices"
	"testing"

	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/providers/local/objstore"
	"github.com/boxsnap/boxsnap/providers/local/objstore/s3test"
)

// TestDeleteWaitsForATakeNamingOverIt: a base deleted while a take names
// a snapshot over it waits for the naming to commit, then hands what it
// held down to the new snapshot as to any other child; every key each
// snapshot holds stays named, and the sweep frees only what none holds.
func TestDeleteWaitsForATakeNamingOverIt(t *testing.T) {
	ctx := t.Context()
	pool := dbtest.New(t)
	f := &fixture{t: t, ctx: ctx, ledger: New(pool)}
	all := []string{"k1", "k2", "k3", "k4", "k5", "k6"}
	if _, err := f.ledger.Claim(ctx, all); err != nil {
		t.Fatal(err)
	}
	if err := f.ledger.Stored(ctx, all); err != nil {
		t.Fatal(err)
	}
	held := map[string][]string{"sna": {"k1", "k2", "k3"}, "snb": {"k2", "k3", "k4"}, "snc": {"k3", "k4", "k5"}}
	if err := f.ledger.Name(ctx, "sna", held["sna"]); err != nil {
		t.Fatal(err)
	}
	if ok, err := f.ledger.NameOver(ctx, "snb", "sna", held["snb"], held["sna"]); err != nil || !ok {
		t.Fatalf("naming snb over sna: %v, %v", ok, err)
	}

	reached, release := make(chan struct{}), make(chan struct{})
	f.ledger.hooks.naming = func(step string) error {
		if step == "names" {
			close(reached)
			<-release
		}
		return nil
	}
	named := make(chan error, 1)
	go func() {
		ok, err := f.ledger.NameOver(ctx, "snc", "snb", held["snc"], held["snb"])
		if err == nil && !ok {
			err = errNotOver
		}
		named <- err
	}()
	<-reached
	deleted := make(chan error, 1)
	go func() { deleted <- f.ledger.Unname(ctx, "snb") }()
	dbtest.WaitBlocked(t, pool, "the delete of the base a take names over", func() bool { return len(deleted) > 0 })
	close(release)
	if err := <-named; err != nil {
		t.Fatalf("the take naming over the base being deleted: %v", err)
	}
	if err := <-deleted; err != nil {
		t.Fatalf("the delete of the base a take named over: %v", err)
	}
	f.ledger.hooks.naming = nil

	var base string
	if err := pool.QueryRow(ctx, `SELECT base_id FROM content_snapshots WHERE snapshot_id = 'snc'`).Scan(&base); err != nil || base != "sna" {
		t.Fatalf("after its base was deleted the new snapshot is over %q (%v); want sna", base, err)
	}
	for _, id := range []string{"sna", "snc"} {
		if got := keys(f.named(id)); !slices.Equal(got, held[id]) {
			t.Fatalf("snapshot %s holds %v in the ledger; it held %v", id, got, held[id])
		}
	}
	srv := s3test.Start(t)
	bucket, err := objstore.Open(srv.Bucket(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE content_objects SET claimed_until = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	if freed, err := f.ledger.Sweep(ctx, bucket); err != nil || freed != 1 {
		t.Fatalf("the sweep freed %d objects (%v); want only k6, which no snapshot holds", freed, err)
	}
}

var errNotOver = errors.New("the naming answered that its base was gone")
