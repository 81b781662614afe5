package web

import (
	"context"
	"html"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
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

// TestPricesInTheirCurrency: the take dialog and a snapshot's row say a
// price as the provider gives it, in its own currency ("$0.056 a day", as
// the provider gives it); an unknown price
// is shown as unknown, never as free. The pages once wrote "$" for every
// currency but EUR, and cut the amount to the cent.
func TestPricesInTheirCurrency(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name        string
		price       providers.Price
		dialog, row string
	}{
		{"USD", providers.Price{Amount: 0.056, Currency: "USD", Per: "day", Known: true}, "It costs $0.056 a day.", "$0.056 a day"},
		{"EUR", providers.Price{Amount: 0.1, Currency: "EUR", Per: "month", Known: true}, "It costs €0.10 a month.", "€0.10 a month"},
		{"GBP", providers.Price{Amount: 0.02, Currency: "GBP", Per: "GB-month", Known: true}, "It costs £0.02 per GB a month.", "£0.02 per GB a month"},
		{"unknown", providers.Price{Currency: "USD", Per: "day"}, "Its price is unknown.", "price unknown"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newSite(t, coretest.Options{Wrap: func(b snapshots.Backend) snapshots.Backend {
				b.Snap = pricedBackend{Backend: b.Snap, price: c.price}
				return b
			}})
			b := s.env.Box(t, snapshots.Owner(), "paid-fox")
			dialog := html.UnescapeString(s.do(t, "GET", "/boxes/paid-fox/take", nil, nil).Body.String())
			if !strings.Contains(dialog, c.dialog) || strings.Contains(dialog, "No charge.") {
				t.Errorf("the take dialog does not say %q:\n%s", c.dialog, dialog)
			}
			op, _, err := s.env.Take.Take(context.Background(), snapshots.Owner(), take.TakeRequest{Box: b.Name, Name: "before"})
			if err != nil {
				t.Fatal(err)
			}
			s.env.Wait(t, op)
			page := html.UnescapeString(s.do(t, "GET", "/boxes/paid-fox", nil, nil).Body.String())
			if !strings.Contains(page, c.row) {
				t.Errorf("the row does not say %q:\n%s", c.row, page)
			}
		})
	}
}
