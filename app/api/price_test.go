package api_test

import (
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// pricedBackend is the local backend offering a price for its snapshots,
// as a paid backend's Snapshotting does.
type pricedBackend struct {
	providers.Backend
	price providers.Price
}

func (p pricedBackend) Snapshotting(kind string) *providers.Snapshotting {
	off := p.Backend.Snapshotting(kind)
	if off == nil {
		return nil
	}
	o := *off
	o.Price = &p.price
	return &o
}

// TestPricesInAnswers: where the backend charges for a snapshot, box_snapshot,
// box_snapshots and box_fork's take say its price, if it
// has one; where it does not, they say nothing of a price, never "free".
func TestPricesInAnswers(t *testing.T) {
	t.Parallel()
	e := setupWith(t, coretest.Options{Wrap: func(b snapshots.Backend) snapshots.Backend {
		b.Snap = pricedBackend{Backend: b.Snap, price: providers.Price{Amount: 0.056, Currency: "USD", Per: "day", Known: true}}
		return b
	}})
	token, agent := e.agent(t, "Cost the migration")
	e.Box(t, agent, "paid-box")
	a := e.call(t, "POST", "/tools/box_snapshot", token, map[string]any{"box": "paid-box", "name": "before"}).must(t, 200)
	contains(t, a.str("message"), "Its price: $0.056 a day.")
	if p, ok := a.JSON["price"].(map[string]any); !ok || p["amount"] != 0.056 || p["currency"] != "USD" || p["per"] != "day" {
		t.Fatalf("box_snapshot's price: %s", a.Raw)
	}
	a = e.call(t, "POST", "/tools/box_snapshots", token, map[string]any{"box": "paid-box"}).must(t, 200)
	sn := a.JSON["boxes"].([]any)[0].(map[string]any)["snapshots"].([]any)[0].(map[string]any)
	if p, ok := sn["price"].(map[string]any); !ok || p["amount"] != 0.056 {
		t.Fatalf("box_snapshots' price: %s", a.Raw)
	}
	a = e.call(t, "POST", "/tools/box_fork", token, map[string]any{"box": "paid-box"}).must(t, 200)
	contains(t, a.str("took"), "Took ‘for a fork’", "Its price: $0.056 a day.")

	// The local backend charges nothing: no price, and no word of one.
	plain := setup(t)
	tok2, ag2 := plain.agent(t, "Free of charge")
	plain.Box(t, ag2, "free-box")
	a = plain.call(t, "POST", "/tools/box_snapshot", tok2, map[string]any{"box": "free-box"}).must(t, 200)
	if _, ok := a.JSON["price"]; ok || strings.Contains(a.str("message"), "price") || strings.Contains(a.str("message"), "free.") {
		t.Fatalf("an unpriced take: %s", a.Raw)
	}
}
