package snapshots

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// TestHoldsWords: what a snapshot holds is "disk", "disk and memory" or
// "device" (section 12, Words: What it holds).
func TestHoldsWords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ holds, scope, want string }{
		{string(providers.HoldsDisk), string(providers.ScopeBox), "disk"},
		{string(providers.HoldsDiskAndMemory), string(providers.ScopeBox), "disk and memory"},
		{string(providers.HoldsDiskAndMemory), string(providers.ScopeDevice), "device"},
		{"device", "", "device"},
		{"", "", "disk"},
	} {
		if got := HoldsWords(c.holds, c.scope); got != c.want {
			t.Errorf("HoldsWords(%q, %q) = %q, want %q", c.holds, c.scope, got, c.want)
		}
	}
}

// TestPriceWords: a price is said as the provider gives it, in its own
// currency (section 1: "$0.056 a day"; section 12: "Prices as the provider
// gives them"); an unknown price is shown as unknown, never as free; no
// price, the person's own storage, is "no charge" in a dialog.
func TestPriceWords(t *testing.T) {
	t.Parallel()
	price := func(amount float64, currency, per string) *providers.Price {
		return &providers.Price{Amount: amount, Currency: currency, Per: per, Known: true}
	}
	for _, c := range []struct {
		p    *providers.Price
		want string
	}{
		{price(0.056, "USD", "day"), "$0.056 a day"},
		{price(0.12, "USD", "day"), "$0.12 a day"},
		{price(5, "USD", "month"), "$5.00 a month"},
		{price(0.1, "EUR", "month"), "€0.10 a month"},
		{price(0.0125, "EUR", "GB-month"), "€0.0125 per GB a month"},
		{price(0.3, "GBP", "day"), "£0.30 a day"},
		{price(2, "CHF", "month"), "CHF 2.00 a month"},
		{&providers.Price{Currency: "USD", Per: "day"}, "unknown"},
		{nil, ""},
	} {
		if got := PriceWords(c.p); got != c.want {
			t.Errorf("PriceWords(%+v) = %q, want %q", c.p, got, c.want)
		}
	}
	unknown := &providers.Price{Amount: 0, Currency: "USD", Per: "day"}
	if got := PriceTag(unknown); got != "price unknown" {
		t.Errorf("an unknown price on a row reads %q", got)
	}
	if got := PriceTag(price(0.3, "GBP", "day")); got != "£0.30 a day" {
		t.Errorf("a price on a row reads %q", got)
	}
	if got := PriceTag(nil); got != "" {
		t.Errorf("no price on a row reads %q", got)
	}
	for _, c := range []struct {
		p           *providers.Price
		until, want string
	}{
		{price(0.056, "USD", "day"), "", "It costs $0.056 a day."},
		{price(0.1, "EUR", "month"), " until then", "It costs €0.10 a month until then."},
		{unknown, "", "Its price is unknown."},
		{nil, " until then", "No charge."},
	} {
		if got := CostsWords(c.p, c.until); got != c.want {
			t.Errorf("CostsWords(%+v, %q) = %q, want %q", c.p, c.until, got, c.want)
		}
	}
	for _, c := range []struct {
		amount   float64
		currency string
		want     string
	}{{5.04, "USD", "$5.04"}, {1.2, "EUR", "€1.20"}, {0.3, "GBP", "£0.30"}, {5, "USD", "$5.00"}, {3.6, "USD", "$3.60"}, {2, "CHF", "CHF 2.00"}} {
		if got := Money(c.amount, c.currency); got != c.want {
			t.Errorf("Money(%v, %q) = %q, want %q", c.amount, c.currency, got, c.want)
		}
	}
}

// TestPriceOf: a recorded price reads back as it was; none is nil; one
// that cannot be read is unknown, never free.
func TestPriceOf(t *testing.T) {
	t.Parallel()
	raw, _ := json.Marshal(providers.Price{Amount: 0.056, Currency: "USD", Per: "day", Known: true})
	if got := PriceWords(PriceOf(raw)); got != "$0.056 a day" {
		t.Errorf("a recorded price reads %q", got)
	}
	for _, none := range []json.RawMessage{nil, json.RawMessage("null")} {
		if p := PriceOf(none); p != nil {
			t.Errorf("PriceOf(%q) = %+v, want nil", none, p)
		}
	}
	if got := PriceTag(PriceOf(json.RawMessage(`{"amount":`))); got != "price unknown" {
		t.Errorf("an unreadable price reads %q", got)
	}
}

// TestSizeWords: sizes in GB for snapshots, as providers bill; GiB for a
// box's memory and disk (section 12); a size boxsnap cannot know is shown
// as unknown, and a whole size says some is shared with the box (section
// 1).
func TestSizeWords(t *testing.T) {
	t.Parallel()
	n := func(v int64) *int64 { return &v }
	whole, own := "whole", "own"
	for _, c := range []struct {
		got, want string
	}{
		{GB(1_200_000_000), "1.2 GB"},
		{GB(13_000_000_000), "13 GB"},
		{GB(52_000_000), "52 MB"},
		{GB(1500), "2 KB"},
		{GiB(16 << 30), "16 GiB"},
		{GiB(3 << 29), "1.5 GiB"},
		{SizeOfWords(n(1_200_000_000), &own), "1.2 GB"},
		{SizeOfWords(n(1_200_000_000), &whole), "1.2 GB, some shared with the box"},
		{SizeOfWords(nil, nil), "unknown"},
		{SizeWords(&Snapshot{}), "size unknown"},
		{SizeWords(&Snapshot{SizeBytes: n(0)}), "shares all its data with the box"},
		{SizeWords(&Snapshot{SizeBytes: n(1_200_000_000), SizeMeaning: &own}), "1.2 GB"},
		{FileSizeWords(1), "1 byte"},
		{FileSizeWords(512), "512 bytes"},
		{FileSizeWords(2_400_000_000), "2.4 GB"},
		{DurationWords(850 * time.Millisecond), "850 ms"},
		{DurationWords(1200 * time.Millisecond), "1.2 s"},
		{DurationWords(125 * time.Second), "2m5s"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// TestStepWords: every step a restore, a take or a delete records while
// the box's card shows it has words of its own, and boxsnap's words for
// what it could not confirm are section 6's: "bb-box could not confirm the
// restore of amber-fox: it was rolling back when bb-box restarted".
func TestStepWords(t *testing.T) {
	t.Parallel()
	want := map[string]string{
		string(providers.StepStop):     "Stopping the box",
		string(providers.StepUndo):     "Taking the undo",
		string(providers.StepRollback): "Restoring",
		string(providers.StepStart):    "Starting the box",
		string(providers.StepReadSize): "Reading its size back",
		string(providers.StepAccess):   "Setting the box straight",
		string(providers.StepAdopt):    "Making the held copy its guest",
		string(providers.StepEarlier):  "Keeping its old guest as its earlier guest",
		StepUndos:                      "Replacing older undos",
		StepWaiting:                    "Waiting for the box's earlier operation",
		StepQueued:                     "Waiting for the box's earlier operation",
		StepCopyClone:                  "Making a held copy",
		StepCopyDisarm:                 "Making the held copy inert",
		StepCopyTemplate:               "Making the held copy inert",
		StepSnapshot:                   "Taking a snapshot",
		StepDelete:                     "Deleting a snapshot",
		"some-new-step":                "Working",
	}
	for step, w := range want {
		if got := StepWords(step); got != w {
			t.Errorf("StepWords(%q) = %q, want %q", step, got, w)
		}
	}
	op := &Operation{Kind: OpRestore, Step: string(providers.StepRollback)}
	if got := UnknownWords("amber-fox", op); got != "boxsnap could not confirm the restore of amber-fox: it was rolling back when boxsnap restarted." {
		t.Errorf("UnknownWords = %q", got)
	}
	seen := "the box is running"
	op = &Operation{Kind: OpDelete, Step: StepDelete, Observed: &seen}
	if got := UnknownWords("amber-fox", op); got != "boxsnap could not confirm the delete of amber-fox: it was deleting the snapshot when boxsnap restarted (the box is running)." {
		t.Errorf("UnknownWords = %q", got)
	}
}
