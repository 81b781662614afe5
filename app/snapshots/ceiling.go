package snapshots

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// PaidRate is one paid backend's row under Settings, Snapshots, Paid
// snapshots: the rate held, this month's spend, and the ceiling.
type PaidRate struct {
	Backend  string  `json:"backend"`
	Label    string  `json:"label"`
	Currency string  `json:"currency"`
	Ceiling  float64 `json:"ceiling"`
	// Rate is every paid snapshot held, kept or not, undos and held copies
	// included, times its daily price, times 30.
	Rate float64 `json:"rate"`
	// Unknown counts the snapshots held whose price boxsnap does not know.
	Unknown int `json:"unknown"`
	// Spend is this month's so far, from the ledger: deleted snapshots'
	// charges included.
	Spend float64 `json:"spend"`
}

// Past reports whether the rate held is past the ceiling: new paid
// snapshots, undos, Keep and renewals are then refused.
func (p PaidRate) Past() bool { return p.Rate > p.Ceiling+1e-9 }

// ceilingOf is the ceiling set for a backend, or the default.
func ceilingOf(st Settings, backend string) float64 {
	if c, ok := st.Ceilings[backend]; ok {
		return c
	}
	return DefaultCeiling
}

// paidHeld is the rate held on a backend now: every paid snapshot record
// that is not failed.
func (s *Service) paidHeld(ctx context.Context, q db.DBTX, backend string) (rate float64, currency string, unknown int, err error) {
	rows, err := s.st.PersonPaidHeld(ctx, q, backend)
	if err != nil {
		return 0, "", 0, fmt.Errorf("the rate held on %s: %w", backend, err)
	}
	for _, r := range rows {
		ch := ChargeOfSnapshot(&Snapshot{Price: r.Price, SizeBytes: r.SizeBytes})
		if !ch.Paid {
			continue
		}
		if !ch.Known {
			unknown++
			continue
		}
		rate += ch.Monthly()
		if currency == "" {
			currency = ch.Currency
		}
	}
	return rate, currency, unknown, nil
}

// MonthStart is the start of the UTC month t falls in: the ledger's month.
func MonthStart(t time.Time) time.Time {
	y, m, _ := t.UTC().Date()
	return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
}

// Spend is what the ledger charged on a backend from since to until, deleted
// snapshots' charges included.
func (s *Service) Spend(ctx context.Context, backend string, since, until time.Time) (float64, error) {
	return s.spendSince(ctx, s.st.Pool, backend, since, until)
}

// spendSince adds up the ledger's charges on a backend from since to now:
// each charge's daily price for the part of a day it was held.
func (s *Service) spendSince(ctx context.Context, q db.DBTX, backend string, since, now time.Time) (float64, error) {
	rows, err := s.st.PersonChargesSince(ctx, q, db.PersonChargesSinceParams{BackendID: backend, Since: since})
	if err != nil {
		return 0, fmt.Errorf("this month's spend on %s: %w", backend, err)
	}
	var sum float64
	for _, r := range rows {
		ch := ChargeOfSnapshot(&Snapshot{Price: r.Price, SizeBytes: r.SizeBytes})
		if !ch.Known {
			continue
		}
		from, until := r.HeldFrom, now
		if r.HeldUntil != nil && r.HeldUntil.Before(until) {
			until = *r.HeldUntil
		}
		if from.Before(since) {
			from = since
		}
		if until.After(from) {
			sum += ch.Daily * until.Sub(from).Hours() / 24
		}
	}
	return sum, nil
}

// PaidRates are the rows of Paid snapshots: one per backend whose boxes'
// snapshots have a price, or that holds paid snapshots.
func (s *Service) PaidRates(ctx context.Context) ([]PaidRate, error) {
	st, err := s.Settings(ctx)
	if err != nil {
		return nil, err
	}
	now := s.now()
	var out []PaidRate
	for _, id := range s.order {
		be := s.backends[id]
		rate, cur, unknown, err := s.paidHeld(ctx, s.st.Reader(ctx), id)
		if err != nil {
			return nil, err
		}
		price := backendPrice(be)
		if price == nil && rate == 0 && unknown == 0 {
			continue
		}
		if cur == "" && price != nil {
			cur = price.Currency
		}
		spend, err := s.spendSince(ctx, s.st.Reader(ctx), id, MonthStart(now), now)
		if err != nil {
			return nil, err
		}
		out = append(out, PaidRate{Backend: id, Label: be.Label, Currency: cur, Ceiling: ceilingOf(st, id), Rate: rate, Unknown: unknown, Spend: spend})
	}
	return out, nil
}

// backendPrice is the price a backend gives for any kind of box it
// snapshots, or nil where it charges nothing.
func backendPrice(be Backend) *providers.Price {
	for _, k := range []string{"linux", "lxc", "qemu", "qemu-windows"} {
		if sn := be.Snap.Snapshotting(k); sn != nil && sn.Price != nil {
			return sn.Price
		}
	}
	return nil
}

// CeilingAdmits is the ceiling's one rule for a take, an undo, a Keep, a
// renewal and a held copy: refused when the rate held on the backend would be
// past the ceiling after it. adds is what the change adds to the rate
// (nothing for a Keep or renewal of a snapshot already held). A price boxsnap
// does not know is admitted only for the person. It runs in the change's
// transaction, under the backend's ceiling lock, and counts the undos
// admitted operations will take (ReservePrice), so two changes cannot both
// pass on the same room under the ceiling.
func (s *Service) CeilingAdmits(ctx context.Context, tx db.DBTX, c Caller, backend string, adds Charge, settings Settings) error {
	if !adds.Paid {
		return nil
	}
	be, err := s.Backend(backend)
	if err != nil {
		return err
	}
	if !adds.Known && !c.IsPerson() {
		return refusal(CodeLimit, priceUnknownOnlyPersonWords(be.Label))
	}
	if err := s.st.PersonCeilingLock(ctx, tx, backend); err != nil {
		return fmt.Errorf("the ceiling's lock: %w", err)
	}
	rate, cur, _, err := s.paidHeld(ctx, tx, backend)
	if err != nil {
		return err
	}
	reserved, err := s.priceReserved(ctx, tx, backend)
	if err != nil {
		return err
	}
	rate += reserved
	if cur == "" {
		cur = adds.Currency
	}
	after := rate + adds.Monthly()
	ceiling := ceilingOf(settings, backend)
	if after > ceiling+1e-9 {
		return refusal(CodeLimit, CeilingWords(be.Label, roundCents(after), ceiling, cur))
	}
	return nil
}

// ChargeOfPlan is what a new snapshot of the box would add, from its
// backend's offer.
func ChargeOfPlan(snapping *providers.Snapshotting) Charge {
	if snapping == nil {
		return Charge{}
	}
	return ChargeOf(snapping.Price, nil)
}

func roundCents(v float64) float64 { return math.Round(v*100) / 100 }

// priceReserved is what the undos that admitted operations will take add
// to the rate on a backend: reserved at their admission (ReservePrice),
// counted until the undo has a record (then paidHeld counts it) or the
// operation ends.
func (s *Service) priceReserved(ctx context.Context, q db.DBTX, backend string) (float64, error) {
	rows, err := s.st.PersonPriceReserved(ctx, q, &backend)
	if err != nil {
		return 0, fmt.Errorf("the prices reserved on %s: %w", backend, err)
	}
	var rate float64
	for _, raw := range rows {
		if ch := ChargeOf(PriceOf(raw), nil); ch.Paid && ch.Known {
			rate += ch.Monthly()
		}
	}
	return rate, nil
}

// ReservePrice reserves on an admitted operation the price of the undo it
// will take, in the transaction that admitted it under the ceiling's lock (an
// undo's price is reserved before the box stops).
func (s *Service) ReservePrice(ctx context.Context, tx db.DBTX, op string, backend string, snapping *providers.Snapshotting) error {
	if snapping == nil || snapping.Price == nil {
		return nil
	}
	raw, err := json.Marshal(snapping.Price)
	if err != nil {
		return fmt.Errorf("reserve the undo's price on %s: %w", op, err)
	}
	if err := s.st.PersonOpReservePrice(ctx, tx, db.PersonOpReservePriceParams{ID: op, BackendID: backend, Price: raw}); err != nil {
		return fmt.Errorf("reserve the undo's price on %s: %w", op, err)
	}
	return nil
}
