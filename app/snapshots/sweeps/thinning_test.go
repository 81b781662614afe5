package sweeps

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// TestThinningTiers walks a fake clock through a week and a day: an
// automatic snapshot every 15 seconds, thinning every 5 minutes, as the
// periodic jobs would. At the end the history holds every snapshot of the
// last 10 minutes, exactly one a minute for the rest of the last hour, one
// an hour for the rest of the last day, one a day up to 7 days, and none
// older; thinning again drops nothing (idempotent). A spared snapshot (one
// an operation uses) outlives every tier, and the size rule drops the
// oldest, never the newest.
func TestThinningTiers(t *testing.T) {
	tz := time.FixedZone("owner", 2*3600)
	start := time.Date(2026, 11, 1, 0, 0, 7, 0, time.UTC)
	end := start.Add(8*24*time.Hour + 37*time.Minute)
	var items []ThinItem
	spared := ThinItem{ID: "spared", TakenAt: start.Add(time.Hour + 30*time.Second), Spare: true}
	n := 0
	thin := func(now time.Time) {
		drop := Thin(items, now, tz, 7, 0, 1<<40)
		items = slices.DeleteFunc(items, func(it ThinItem) bool { return slices.Contains(drop, it.ID) })
	}
	for now := start; !now.After(end); now = now.Add(15 * time.Second) {
		if now.Equal(spared.TakenAt) {
			items = append(items, spared)
		} else {
			n++
			items = append(items, ThinItem{ID: fmt.Sprintf("sn%06d", n), TakenAt: now})
		}
		if now.Sub(start)%(5*time.Minute) == 0 {
			thin(now)
		}
	}
	now := end
	thin(now)
	if again := Thin(items, now, tz, 7, 0, 1<<40); len(again) > 0 {
		t.Fatalf("thinning twice dropped %d more", len(again))
	}

	var all, minutes, hours, days []time.Time
	for _, it := range items {
		if it.ID == "spared" {
			continue
		}
		age := now.Sub(it.TakenAt)
		switch {
		case age > 7*24*time.Hour:
			t.Errorf("%s (%s old) outlived the 7 days", it.ID, age)
		case age <= snapshots.ThinAllFor:
			all = append(all, it.TakenAt)
		case age <= snapshots.ThinMinutelyFor:
			minutes = append(minutes, it.TakenAt)
		case age <= snapshots.ThinHourlyFor:
			hours = append(hours, it.TakenAt)
		default:
			days = append(days, it.TakenAt)
		}
	}
	// Every take of the last 10 minutes: 40 at one each 15 seconds (41
	// when one falls on the boundary).
	if len(all) < 40 || len(all) > 41 {
		t.Errorf("%d snapshots in the last 10 minutes, want every one (40)", len(all))
	}
	distinct := func(ts []time.Time, layout string) int {
		seen := map[string]bool{}
		for _, ts := range ts {
			seen[ts.In(tz).Format(layout)] = true
		}
		return len(seen)
	}
	// One a minute for the last hour, past the first 10 minutes: 50 minutes,
	// one in each (the minute that straddles a boundary may add one).
	if d := distinct(minutes, "15:04"); d != len(minutes) || len(minutes) < 50 || len(minutes) > 51 {
		t.Errorf("%d snapshots in minutes 10 to 60 over %d distinct minutes, want one a minute (50)", len(minutes), d)
	}
	if d := distinct(hours, "02 15"); d != len(hours) || len(hours) < 23 || len(hours) > 24 {
		t.Errorf("%d snapshots in hours 1 to 24 over %d distinct hours, want one an hour (23)", len(hours), d)
	}
	if d := distinct(days, "2006-01-02"); d != len(days) || len(days) < 6 || len(days) > 7 {
		t.Errorf("%d snapshots in days 1 to 7 over %d distinct days, want one a day (6 to 7)", len(days), d)
	}
	if !slices.ContainsFunc(items, func(it ThinItem) bool { return it.ID == "spared" }) {
		t.Error("thinning dropped a snapshot an operation uses")
	}

	// The size rule: with nothing old enough to drop and the box past its
	// size, the oldest automatic snapshot goes, one each time, never the
	// newest.
	few := []ThinItem{{ID: "old", TakenAt: now.Add(-3 * time.Minute)}, {ID: "mid", TakenAt: now.Add(-2 * time.Minute)},
		{ID: "new", TakenAt: now.Add(-time.Minute)}}
	if got := Thin(few, now, tz, 7, 200<<30, 100<<30); !slices.Equal(got, []string{"old"}) {
		t.Errorf("past the size, thinning dropped %v, want the oldest only", got)
	}
	few[0].Spare = true
	if got := Thin(few, now, tz, 7, 200<<30, 100<<30); !slices.Equal(got, []string{"mid"}) {
		t.Errorf("past the size with the oldest in use, thinning dropped %v, want the next oldest", got)
	}
	if got := Thin(few[2:], now, tz, 7, 200<<30, 100<<30); len(got) != 0 {
		t.Errorf("past the size with one automatic snapshot, thinning dropped %v, want none: never the newest", got)
	}
	if got := Thin(few, now, tz, 7, 50<<30, 100<<30); len(got) != 0 {
		t.Errorf("under the size, thinning dropped %v", got)
	}
}
