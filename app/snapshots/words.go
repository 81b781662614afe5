package snapshots

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// The words a person or an agent reads, written once (section 12, "Words"):
// what a snapshot holds, prices in their currency, sizes, how long, an
// operation's step, and what boxsnap could not confirm. The pages, the API
// and its tools, and the CLI say these through here; words_test.go holds
// them to the specification's sentences.

// HoldsWords is what a snapshot holds: "disk", "disk and memory", or
// "device" for a device's snapshot (section 12: What it holds).
func HoldsWords(holds, scope string) string {
	switch {
	case scope == string(providers.ScopeDevice) || holds == string(providers.ScopeDevice):
		return "device"
	case holds == string(providers.HoldsDiskAndMemory):
		return "disk and memory"
	}
	return "disk"
}

// currencySign is how an amount of currency is written in front of it: "$",
// "€", "£", or the currency's code and a space ("CHF ") for any other.
func currencySign(currency string) string {
	switch currency {
	case "", "USD":
		return "$"
	case "EUR":
		return "€"
	case "GBP":
		return "£"
	}
	return currency + " "
}

// Money says an amount in its currency, always to the cent, as section 8's
// words do ("about $5.04 a month, past your ceiling of $5.00"): "€1.20",
// "£0.30", "CHF 2.00".
func Money(amount float64, currency string) string {
	return currencySign(currency) + strconv.FormatFloat(amount, 'f', 2, 64)
}

// PriceWords says a price as the provider gives it (section 1: "$0.056 a
// day"): its currency's sign, the amount to the provider's last digit and
// at least to the cent, and its period ("a day", "a month", "per GB a
// month"). A price boxsnap does not know is "unknown", never free; no price
// at all (nil: the person's own storage) is "".
func PriceWords(p *providers.Price) string {
	if p == nil {
		return ""
	}
	if !p.Known {
		return "unknown"
	}
	amount := strconv.FormatFloat(p.Amount, 'f', -1, 64)
	if i := strings.IndexByte(amount, '.'); i < 0 {
		amount += ".00"
	} else if len(amount)-i == 2 {
		amount += "0"
	}
	per := "a " + p.Per
	if p.Per == "GB-month" {
		per = "per GB a month"
	}
	return currencySign(p.Currency) + amount + " " + per
}

// PriceTag is a price among a row's or a list's words: PriceWords, "price
// unknown" for a price boxsnap does not know, and "" where there is none.
func PriceTag(p *providers.Price) string {
	if p != nil && !p.Known {
		return "price unknown"
	}
	return PriceWords(p)
}

// CostsWords is a dialog's sentence of what something costs: "It costs
// $0.056 a day." ("It costs $0.056 a day until then." with until " until
// then"), "Its price is unknown.", or "No charge." where there is no price.
func CostsWords(p *providers.Price, until string) string {
	switch {
	case p == nil:
		return "No charge."
	case !p.Known:
		return "Its price is unknown."
	}
	return "It costs " + PriceWords(p) + until + "."
}

// PriceOf reads a price recorded as JSON (a snapshot's record); nil where
// there is none. One that cannot be read is unknown, never free.
func PriceOf(raw json.RawMessage) *providers.Price {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var p providers.Price
	if json.Unmarshal(raw, &p) != nil {
		return &providers.Price{}
	}
	return &p
}

// GB says a size in GB, as providers bill (section 12, "Words").
func GB(n int64) string {
	gb := float64(n) / 1e9
	switch {
	case n < 1e6:
		return fmt.Sprintf("%d KB", (n+999)/1000)
	case gb < 0.1:
		return fmt.Sprintf("%.0f MB", float64(n)/1e6)
	case gb < 10:
		return fmt.Sprintf("%.1f GB", gb)
	}
	return fmt.Sprintf("%.0f GB", gb)
}

// GiB says a box's memory or disk in GiB (section 12, "Words").
func GiB(n int64) string {
	g := float64(n) / (1 << 30)
	if g == float64(int64(g)) {
		return fmt.Sprintf("%d GiB", int64(g))
	}
	return fmt.Sprintf("%.1f GiB", g)
}

// FileSizeWords says the size of a file, in a snapshot or written from one
// (an export): "1 byte", "512 bytes", else in GB as GB says it.
func FileSizeWords(n int64) string {
	switch {
	case n == 1:
		return "1 byte"
	case n < 1000:
		return fmt.Sprintf("%d bytes", n)
	}
	return GB(n)
}

// SizeOfWords says a snapshot's size and what it means (section 1): "1.2
// GB", "1.2 GB, some shared with the box" for a whole size, or "unknown".
func SizeOfWords(bytes *int64, meaning *string) string {
	if bytes == nil {
		return "unknown"
	}
	w := GB(*bytes)
	if meaning != nil && *meaning == "whole" {
		w += ", some shared with the box"
	}
	return w
}

// SizeWords say a snapshot's size on its row: "size unknown" when boxsnap
// cannot know it, "shares all its data with the box" rather than "0 KB"
// when deleting it would free nothing, else SizeOfWords.
func SizeWords(sn *Snapshot) string {
	switch {
	case sn.SizeBytes == nil:
		return "size unknown"
	case *sn.SizeBytes == 0:
		return "shares all its data with the box"
	}
	return SizeOfWords(sn.SizeBytes, sn.SizeMeaning)
}

// DurationWords says how long something took: "850 ms", "1.2 s", "2m5s".
func DurationWords(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// StepWords says an operation's step while it runs, as the box's card
// shows it: "Stopping the box", "Taking the undo", "Restoring"; "Working"
// for a step with no words of its own.
func StepWords(step string) string {
	switch step {
	case string(providers.StepStop):
		return "Stopping the box"
	case string(providers.StepUndo):
		return "Taking the undo"
	case string(providers.StepRollback):
		return "Restoring"
	case string(providers.StepStart):
		return "Starting the box"
	case string(providers.StepReadSize):
		return "Reading its size back"
	case StepUndos:
		return "Replacing older undos"
	case StepWaiting, StepQueued:
		return "Waiting for the box's earlier operation"
	case string(providers.StepAccess):
		return "Setting the box straight"
	case StepCopyClone:
		return "Making a held copy"
	case StepCopyDisarm, StepCopyTemplate:
		return "Making the held copy inert"
	case string(providers.StepAdopt):
		return "Making the held copy its guest"
	case string(providers.StepEarlier):
		return "Keeping its old guest as its earlier guest"
	case StepSnapshot:
		return "Taking a snapshot"
	case StepDelete:
		return "Deleting a snapshot"
	}
	return "Working"
}

// doingWords says what an operation was doing at a step, in the middle of
// a sentence: "rolling back", "taking the undo".
func doingWords(step string) string {
	switch step {
	case string(providers.StepRollback):
		return "rolling back"
	case string(providers.StepStop):
		return "stopping it"
	case string(providers.StepStart):
		return "starting it"
	case string(providers.StepUndo):
		return "taking the undo"
	case StepSnapshot:
		return "taking the snapshot"
	case StepDelete:
		return "deleting the snapshot"
	}
	return "working on it"
}

// UnknownWords says what boxsnap could not confirm (section 6: "boxsnap
// could not confirm the restore of amber-fox: it was rolling back when
// boxsnap restarted"), with what it observed since, if anything.
func UnknownWords(box string, op *Operation) string {
	w := fmt.Sprintf("boxsnap could not confirm the %s of %s: it was %s when boxsnap restarted", op.Kind, box, doingWords(op.Step))
	if op.Observed != nil && *op.Observed != "" {
		w += " (" + *op.Observed + ")"
	}
	return w + "."
}

// AlwaysWithUndoWords says that a box threads run on is restored only with
// an undo: the refusal of a restore without one, and the restore dialog's
// undo line, which is ticked and locked there.
func AlwaysWithUndoWords(box string) string {
	return box + " is a box threads run on: it is never restored without an undo."
}
