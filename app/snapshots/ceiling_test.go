package snapshots_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
)

// pricedLocal is the local backend charging $0.06 a day a snapshot: $1.80 a
// month held (daily price times 30). Only tests can price it.
var pricedLocal = &providers.Price{Amount: 0.06, Currency: "USD", Per: "day", Known: true}

func runOp(t *testing.T, e *coretest.Env, op *snapshots.Operation) {
	t.Helper()
	if err := e.Core.RunOperation(context.Background(), op.ID); err != nil {
		t.Fatal(err)
	}
}

func setCeiling(t *testing.T, e *coretest.Env, backend string, c float64) {
	t.Helper()
	ctx := context.Background()
	st, err := e.Core.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st.Ceilings = map[string]float64{backend: c}
	if err := e.Core.SaveSettings(ctx, snapshots.Owner(), st); err != nil {
		t.Fatal(err)
	}
}

// TestCeilingBoundsTheRateHeld, on a priced test backend: the ceiling bounds
// the rate held (every paid snapshot, times its daily price, times 30),
// checked on take, undo, Keep and renewal, in the ceiling's words, for agents
// too; a ceiling lowered below the rate refuses the next take, Keep and
// renewal, warns, and deletes nothing; a restore's undo one snapshot past the
// ceiling is refused before the box stops, and the person can restore without
// it; deleting keeps the month's spend.
func TestCeilingBoundsTheRateHeld(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := coretest.New(t, coretest.Options{NoWorkers: true, Price: pricedLocal})
	_, agent, _ := e.Thread(t, "Cost the migration")
	e.Box(t, agent, "paid-box")

	a := e.AdmitReady(t, snapshots.Owner(), "paid-box", "first")
	b := e.AdmitReady(t, agent, "paid-box", "second")
	rates, err := e.Core.PaidRates(ctx)
	if err != nil || len(rates) != 1 {
		t.Fatalf("paid rates: %+v %v", rates, err)
	}
	if r := rates[0]; math.Abs(r.Rate-3.60) > 1e-9 || r.Ceiling != snapshots.DefaultCeiling || r.Past() || r.Currency != "USD" {
		t.Fatalf("two snapshots at $0.06 a day: %+v, want $3.60 a month held under $5", r)
	}

	// A third would bring the rate to $5.40: refused for the agent and the
	// person alike, in the ceiling's words.
	want := "It would bring snapshots held on this host to about $5.40 a month, past your ceiling of $5.00. Delete one, or raise the ceiling in Settings, Snapshots, Paid snapshots."
	for _, c := range []snapshots.Caller{agent, snapshots.Owner()} {
		_, _, err := e.Take.Take(ctx, c, taking.TakeRequest{Box: "paid-box", Name: "third"})
		refusedExactly(t, err, want)
	}

	// At a rate one snapshot below the ceiling, a restore's undo is
	// refused before anything stops; the person may restore without it.
	_, err = e.Restores.Restore(ctx, agent, snapshots.RestoreRequest{Box: "paid-box", Snapshot: b.ID, Replace: true})
	refusedExactly(t, err, want)
	_, err = e.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "paid-box", Snapshot: b.ID})
	refusedExactly(t, err, want+" Or untick the undo to restore without one.")
	var restores int
	if err := e.Pool.QueryRow(ctx, "SELECT count(*) FROM operations WHERE kind = 'restore'").Scan(&restores); err != nil || restores != 0 {
		t.Fatalf("a refused restore left %d operations (%v): it stopped nothing, so it must record nothing", restores, err)
	}
	op, err := e.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "paid-box", Snapshot: b.ID, NoUndo: true})
	if err != nil || op == nil {
		t.Fatalf("the person's restore without an undo: %v", err)
	}
	runOp(t, e, op)

	// Keep under the ceiling.
	kop, err := e.Keeps.Keep(ctx, snapshots.Owner(), snapshots.KeepRequest{Box: "paid-box", Snapshot: a.ID})
	if err != nil {
		t.Fatal(err)
	}
	runOp(t, e, kop)

	// The ceiling lowered below the rate: the next take, Keep and renewal
	// are refused, the tab and Settings warn, and nothing is deleted.
	setCeiling(t, e, "local", 3)
	past := "It would bring snapshots held on this host to about $3.60 a month, past your ceiling of $3.00. Delete one, or raise the ceiling in Settings, Snapshots, Paid snapshots."
	_, _, err = e.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: "paid-box"})
	refusedExactly(t, err, "It would bring snapshots held on this host to about $5.40 a month, past your ceiling of $3.00. Delete one, or raise the ceiling in Settings, Snapshots, Paid snapshots.")
	_, err = e.Keeps.Keep(ctx, snapshots.Owner(), snapshots.KeepRequest{Box: "paid-box", Snapshot: b.ID})
	refusedExactly(t, err, past)
	_, err = e.Keeps.Renew(ctx, snapshots.Owner(), snapshots.KeepRequest{Box: "paid-box", Snapshot: a.ID})
	refusedExactly(t, err, past)
	sa, _, _ := e.Core.Snapshot(ctx, snapshots.Owner(), a.ID)
	if w := e.Keeps.KeepCeiling(ctx, sa); w != past {
		t.Errorf("the row's and bulk Keep's words: %q, want %q", w, past)
	}
	rates, _ = e.Core.PaidRates(ctx)
	if !rates[0].Past() || rates[0].PastWords() != "Snapshots held on this host are about $3.60 a month, past your ceiling of $3.00: new paid snapshots, undos, Keep and renewals are refused. Nothing is deleted." {
		t.Errorf("the warning: %+v %q", rates[0], rates[0].PastWords())
	}
	list, err := e.Core.List(ctx, snapshots.Owner(), snapshots.ListQuery{Box: "paid-box"})
	if err != nil || len(list) != 1 || len(list[0].Snapshots) != 2 {
		t.Fatalf("the ceiling deleted something: %v %v", list, err)
	}

	// Deleting keeps the month's spend: the ledger keeps a deleted
	// snapshot's charge. Its window is set to two days for exact numbers.
	before := rates[0].Spend
	dop, err := e.Keeps.Delete(ctx, snapshots.Owner(), snapshots.DeleteRequest{Box: "paid-box", Snapshot: b.ID})
	if err != nil {
		t.Fatal(err)
	}
	runOp(t, e, dop)
	rates, _ = e.Core.PaidRates(ctx)
	if math.Abs(rates[0].Rate-1.80) > 1e-9 {
		t.Errorf("after the delete the rate is %.2f, want 1.80", rates[0].Rate)
	}
	if rates[0].Spend < before {
		t.Errorf("this month's spend fell from %f to %f on a delete", before, rates[0].Spend)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := e.Pool.Exec(ctx, "UPDATE snapshot_charges SET held_from = $2, held_until = $3 WHERE snapshot_id = $1 AND held_until IS NOT NULL",
		b.ID, t0, t0.Add(48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	spend, err := e.Core.Spend(ctx, "local", t0, t0.AddDate(0, 0, 10))
	if err != nil || math.Abs(spend-0.12) > 1e-9 {
		t.Errorf("a deleted snapshot held 2 days at $0.06: spend %f %v, want 0.12", spend, err)
	}
	// Back under the ceiling, renewals pass again.
	if _, err := e.Keeps.Renew(ctx, snapshots.Owner(), snapshots.KeepRequest{Box: "paid-box", Snapshot: a.ID}); err != nil {
		t.Errorf("a renewal under the ceiling: %v", err)
	}
}

// TestUnknownPriceOnlyThePerson: a price boxsnap does not know is admitted
// only by the person.
func TestUnknownPriceOnlyThePerson(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := coretest.New(t, coretest.Options{NoWorkers: true, Price: &providers.Price{Currency: "USD", Per: "day"}})
	_, agent, _ := e.Thread(t, "Unknown prices")
	e.Box(t, agent, "odd-box")
	_, _, err := e.Take.Take(ctx, agent, taking.TakeRequest{Box: "odd-box"})
	refusedExactly(t, err, "The price of snapshots on this host is unknown: only the person admits one.")
	if _, _, err := e.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: "odd-box"}); err != nil {
		t.Errorf("the person's take at an unknown price: %v", err)
	}
}

func refusedExactly(t *testing.T, err error, words string) {
	t.Helper()
	r, ok := snapshots.AsRefusal(err)
	if !ok {
		t.Fatalf("want the refusal %q, got %v", words, err)
	}
	if r.Words != words {
		t.Fatalf("refusal says\n %q\nwant\n %q", r.Words, words)
	}
}
