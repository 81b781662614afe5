package pagemodel

import (
	"testing"
	"time"
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
