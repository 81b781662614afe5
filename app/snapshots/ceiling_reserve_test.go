package snapshots_test

import (
	"context"
	"math"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
)

// TestCeilingReservesUndos: an undo's space and, on a paid provider, its
// price are reserved before the box stops: two restores admitted back to
// back, before either takes its undo, where only one undo fits under the
// ceiling. The second is refused in the ceiling's words, and so is a take
// admitted after the first; once the first's undo has a record its price
// counts once, not twice.
func TestCeilingReservesUndos(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := coretest.New(t, coretest.Options{NoWorkers: true, Price: pricedLocal})
	e.Box(t, snapshots.Owner(), "paid-one")
	e.Box(t, snapshots.Owner(), "paid-two")
	a := e.AdmitReady(t, snapshots.Owner(), "paid-one", "first")
	b := e.AdmitReady(t, snapshots.Owner(), "paid-two", "second")
	// $3.60 held; room for one more snapshot at $1.80 a month.
	setCeiling(t, e, "local", 5.40)

	first, err := e.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "paid-one", Snapshot: a.ID})
	if err != nil || first == nil {
		t.Fatalf("the first restore, its undo under the ceiling: %v", err)
	}
	want := "It would bring snapshots held on this host to about $7.20 a month, past your ceiling of $5.40. Delete one, or raise the ceiling in Settings, Snapshots, Paid snapshots."
	_, err = e.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "paid-two", Snapshot: b.ID})
	refusedExactly(t, err, want+" Or untick the undo to restore without one.")
	_, _, err = e.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: "paid-two", Name: "third"})
	refusedExactly(t, err, want)
	var restores int
	if err := e.Pool.QueryRow(ctx, "SELECT count(*) FROM operations WHERE kind = 'restore'").Scan(&restores); err != nil || restores != 1 {
		t.Fatalf("%d restores admitted (%v), want the first only", restores, err)
	}

	// The first runs: its undo has a record, held at $1.80, and its price
	// is no longer reserved as well.
	runOp(t, e, first)
	rates, err := e.Core.PaidRates(ctx)
	if err != nil || len(rates) != 1 || math.Abs(rates[0].Rate-5.40) > 1e-9 {
		t.Fatalf("after the first restore: %+v %v, want $5.40 held", rates, err)
	}
	setCeiling(t, e, "local", 7.20)
	if _, _, err := e.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: "paid-two", Name: "third"}); err != nil {
		t.Fatalf("a take to $7.20 under a ceiling of $7.20, the undo counted once: %v", err)
	}
}
