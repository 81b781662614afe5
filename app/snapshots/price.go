package snapshots

import (
	"github.com/boxsnap/boxsnap/providers"
)

// DaysInMonth turns a daily price into a month's rate ("times its daily
// price, times 30").
const DaysInMonth = 30

// Charge is what holding one snapshot costs, read from its record's price.
type Charge struct {
	Paid     bool    // the provider charges for it
	Known    bool    // the price is known; an unknown one is never shown as free
	Daily    float64 // in Currency, a day
	Currency string
}

// Monthly is the charge's rate a month.
func (c Charge) Monthly() float64 { return c.Daily * DaysInMonth }

// ChargeOf reads a price as the provider gives it (a day, a month, or a
// GB-month of the snapshot's size) into a daily charge.
func ChargeOf(p *providers.Price, sizeBytes *int64) Charge {
	if p == nil {
		return Charge{}
	}
	c := Charge{Paid: true, Known: p.Known, Currency: p.Currency}
	if !p.Known {
		return c
	}
	switch p.Per {
	case "day":
		c.Daily = p.Amount
	case "month":
		c.Daily = p.Amount / DaysInMonth
	case "GB-month":
		if sizeBytes == nil {
			c.Known = false
			return c
		}
		c.Daily = p.Amount * float64(*sizeBytes) / 1e9 / DaysInMonth
	default:
		c.Known = false
	}
	return c
}

// ChargeOfSnapshot reads a snapshot record's price.
func ChargeOfSnapshot(sn *Snapshot) Charge { return ChargeOf(PriceOf(sn.Price), sn.SizeBytes) }
