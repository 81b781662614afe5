package pagemodel

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/internal/wordshape"
	"github.com/boxsnap/boxsnap/providers"
)

// TestWhenWords: rows say "Today 10:42", "Yesterday 23:39", "Thu 09:15"
// within the week and "12 Oct" before, as the rows say it.
func TestWhenWords(t *testing.T) {
	t.Parallel()
	tz := time.UTC
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, tz)
	for _, c := range []struct {
		at   time.Time
		want string
	}{
		{now.Add(-time.Hour), "Today 09:00"},
		{time.Date(2026, 11, 29, 23, 39, 0, 0, tz), "Yesterday 23:39"},
		{time.Date(2026, 11, 26, 9, 15, 0, 0, tz), "Thu 09:15"},
		{time.Date(2026, 10, 12, 9, 15, 0, 0, tz), "12 Oct"},
		{time.Date(2025, 10, 12, 9, 15, 0, 0, tz), "12 Oct 2025"},
	} {
		if got := WhenWords(c.at, now, tz); got != c.want {
			t.Errorf("whenWords(%s) = %q, want %q", c.at, got, c.want)
		}
	}
	if got := WhenAt(time.Date(2026, 11, 29, 23, 39, 0, 0, tz), now, tz); got != "yesterday at 23:39" {
		t.Errorf("whenAt = %q, want \"yesterday at 23:39\"", got)
	}
	if got := agoWords(2*time.Hour + 5*time.Minute); got != "2 h 5 min" {
		t.Errorf("agoWords = %q, want \"2 h 5 min\"", got)
	}
}

// TestMonthly: a price's rate a month, for the Snapshots tab's line, is 30
// days of a daily price.
func TestMonthly(t *testing.T) {
	t.Parallel()
	if got := monthly([]byte(`{"amount":0.12,"currency":"USD","per":"day","known":true}`)); got < 3.59 || got > 3.61 {
		t.Errorf("monthly = %v, want 3.60", got)
	}
	if got := monthly([]byte(`{"amount":0,"currency":"USD","per":"day","known":false}`)); got != 0 {
		t.Errorf("monthly of an unknown price = %v, want 0", got)
	}
}

// TestPriceWords: a price on a row is said as the provider gives it, and
// an unknown one is shown as unknown, never as free; no price, the
// person's own storage, is "no charge" in a dialog.
func TestPriceWords(t *testing.T) {
	t.Parallel()
	price := func(amount float64, currency, per string) *providers.Price {
		return &providers.Price{Amount: amount, Currency: currency, Per: per, Known: true}
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
}

// TestPriceOf: a recorded price that cannot be read is unknown on a row,
// never free.
func TestPriceOf(t *testing.T) {
	t.Parallel()
	if got := PriceTag(snapshots.PriceOf(json.RawMessage(`{"amount":`))); got != "price unknown" {
		t.Errorf("an unreadable price reads %q", got)
	}
}

// TestSizeWords: a snapshot's size on its row is unknown when boxsnap
// cannot know it, and says it shares all its data with the box rather
// than "0 KB".
func TestSizeWords(t *testing.T) {
	t.Parallel()
	n := func(v int64) *int64 { return &v }
	own := "own"
	for _, c := range []struct {
		got, want string
	}{
		{SizeWords(&snapshots.Snapshot{}), "size unknown"},
		{SizeWords(&snapshots.Snapshot{SizeBytes: n(0)}), "shares all its data with the box"},
		{SizeWords(&snapshots.Snapshot{SizeBytes: n(1_200_000_000), SizeMeaning: &own}), "1.2 GB"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// TestRefusalWordsShape: the refusals the pages' models say are full
// sentences: read as words, with one full stop at the end.
func TestRefusalWordsShape(t *testing.T) {
	t.Parallel()
	const box = "amber-fox"
	for _, w := range []string{ReleasedTakesNoneWords(box), NoAutomaticWords(box), InTrashWords(box)} {
		wordshape.Check(t, w)
		if !strings.HasSuffix(w, ".") || strings.HasSuffix(w, "..") {
			t.Errorf("%q does not end with one full stop", w)
		}
	}
}

// TestStepWords: every step a restore, a take or a delete records while
// the box's card shows it has words of its own, and a step boxsnap does
// not know reads "Working".
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
		snapshots.StepUndos:            "Replacing older undos",
		snapshots.StepWaiting:          "Waiting for the box's earlier operation",
		snapshots.StepQueued:           "Waiting for the box's earlier operation",
		snapshots.StepCopyClone:        "Making a held copy",
		snapshots.StepCopyDisarm:       "Making the held copy inert",
		snapshots.StepCopyTemplate:     "Making the held copy inert",
		snapshots.StepSnapshot:         "Taking a snapshot",
		snapshots.StepDelete:           "Deleting a snapshot",
		"some-new-step":                "Working",
	}
	for step, w := range want {
		if got := StepWords(step); got != w {
			t.Errorf("StepWords(%q) = %q, want %q", step, got, w)
		}
	}
}

// TestSizeOfBoxSaysTheSharedTreeApart: a fork over its snapshot's shared
// files shows its own disk, and what it shares on a part of its own.
func TestSizeOfBoxSaysTheSharedTreeApart(t *testing.T) {
	t.Parallel()
	got := SizeOfBox(&providers.BoxSize{DiskBytes: 200 << 20, SharedBytes: 700 << 20})
	if want := "0.2 GiB disk · 0.7 GiB shared with its snapshot's other forks"; got != want {
		t.Fatalf("SizeOfBox = %q, want %q", got, want)
	}
}

// TestEventWords: each kind of event is said in words, never by its name
// with dashes; a line of an event ends with one full stop even where its
// words are sentences; words that begin with the kind's own say it once.
func TestEventWords(t *testing.T) {
	t.Parallel()
	kinds := []string{snapshots.EvSnapshotTaken, snapshots.EvSnapshotFailed, snapshots.EvRestoreAsked,
		snapshots.EvRestored, snapshots.EvRestoreFailed, snapshots.EvRestoredOutside, snapshots.EvRestoreOutsideFailed,
		snapshots.EvRestoreOutsideRun, snapshots.EvChangedOutside, snapshots.EvForkAsked, snapshots.EvForked,
		snapshots.EvForkFailed, snapshots.EvSnapshotDeleted, snapshots.EvSnapshotKept, snapshots.EvSnapshotUnkept,
		snapshots.EvSnapshotLost, snapshots.EvSnapshotUnavailable, snapshots.EvSnapshotFound, snapshots.EvHeldCopyMade,
		snapshots.EvHeldCopyStarted, snapshots.EvMade, snapshots.EvReleased, snapshots.EvRestoreRequested,
		snapshots.EvRestoreDeclined, boxes.EvSnapshotForgotten, snapshots.EvGuestGone, snapshots.EvReleaseStopped,
		snapshots.EvSetStraight, snapshots.EvSnapshotSaved, snapshots.EvSnapshotUnsaved, snapshots.EvHistorySettings,
		snapshots.EvHistoryThinned, snapshots.EvHistoryDeleted, snapshots.EvReset, snapshots.EvResetUndone,
		snapshots.EvResetFailed, snapshots.EvTrashed, snapshots.EvUntrashed, snapshots.EvStarted}
	for _, k := range kinds {
		w := EventWords(k)
		if w == "" || strings.Contains(w, "-") || strings.ToUpper(w[:1]) != w[:1] {
			t.Errorf("EventWords(%q) = %q", k, w)
		}
	}
	for _, c := range []struct {
		ev   snapshots.LogEvent
		want string
	}{
		{snapshots.LogEvent{Kind: snapshots.EvSnapshotUnkept, Words: snapshots.LogUnkeptWords("a", false)}, "amber-fox stopped keeping: ‘a’ goes with the box again."},
		{snapshots.LogEvent{Kind: "", Words: "x"}, "amber-fox: x."},
	} {
		if got := EventLine("amber-fox", c.ev); got != c.want {
			t.Errorf("EventLine(%+v) = %q, want %q", c.ev, got, c.want)
		}
	}
	if what, words := EventParts(snapshots.LogEvent{Kind: snapshots.EvMade, Words: "made on this host"}); what != "Made on this host" || words != "" {
		t.Errorf("EventParts of made = %q, %q", what, words)
	}
}

// TestContentsEventWords: each kind of event Contents logs is said in
// words, never by its name with dashes.
func TestContentsEventWords(t *testing.T) {
	t.Parallel()
	for _, k := range []string{contents.EvDownloaded, contents.EvExported, contents.EvImported, contents.EvShared, contents.EvShareRevoked, contents.EvShareRedeemed} {
		w := EventWords(k)
		if w == "" || strings.Contains(w, "-") || strings.ToUpper(w[:1]) != w[:1] {
			t.Errorf("EventWords(%q) = %q", k, w)
		}
	}
}

// TestBoxesEventLines: a release that stopped reads in a settled card's
// live region as the release stopped, with its reason, and that nothing
// kept was deleted; a box made says where, once.
func TestBoxesEventLines(t *testing.T) {
	t.Parallel()
	ev := snapshots.LogEvent{Kind: snapshots.EvReleaseStopped, Words: "Release did not finish: pve-1 does not answer. Nothing kept was deleted."}
	want := "amber-fox release stopped: Release did not finish: pve-1 does not answer. Nothing kept was deleted."
	if got := EventLine("amber-fox", ev); got != want {
		t.Errorf("EventLine(%+v) = %q, want %q", ev, got, want)
	}
	made := snapshots.LogEvent{Kind: snapshots.EvMade, Words: boxes.LogMadeOnWords("this host")}
	if got := EventLine("amber-fox", made); got != "amber-fox made on this host." {
		t.Errorf("EventLine(%+v) = %q, want %q", made, got, "amber-fox made on this host.")
	}
}
