package snapshots

import (
	"strings"
	"testing"
	"time"
)

func TestNames(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 26, 10, 42, 7, 0, time.UTC) // a Thursday
	if got := DefaultName(at, time.UTC); got != "Thu 10:42" {
		t.Errorf("DefaultName = %q, want Thu 10:42", got)
	}
	if got := UndoName(at.Add(20*time.Minute), time.UTC); got != "before the restore at 11:02" {
		t.Errorf("UndoName = %q", got)
	}
	if got := UniqueName("Thu 10:42", map[string]bool{"Thu 10:42": true}); got != "Thu 10:42 (2)" {
		t.Errorf("UniqueName = %q, want Thu 10:42 (2)", got)
	}
	if got := UniqueName("a", map[string]bool{"a": true, "a (2)": true}); got != "a (3)" {
		t.Errorf("UniqueName = %q, want a (3)", got)
	}
	long := strings.Repeat("x", 60)
	if got := UniqueName(long, map[string]bool{long: true}); len(got) != 60 || !strings.HasSuffix(got, " (2)") {
		t.Errorf("UniqueName of 60 characters = %q (%d)", got, len(got))
	}
	for _, bad := range []string{"", "   ", strings.Repeat("y", 61), "a\x00b"} {
		if _, err := CleanName(bad); err == nil {
			t.Errorf("CleanName(%q) accepted", bad)
		}
	}
	if _, err := CleanNote(strings.Repeat("n", 1025)); err == nil || !strings.Contains(err.Error(), "at most 1 KB") {
		t.Errorf("CleanNote of 1025 bytes: %v", err)
	}
}

func TestIDs(t *testing.T) {
	t.Parallel()
	id := NewID(PrefixSnapshot)
	if !ValidID(PrefixSnapshot, id) || len(id) != 14 {
		t.Fatalf("NewID = %q", id)
	}
	for _, bad := range []string{"sn", "snABCDEFGHIJKL", "op7kq2m9xa4pd0", "sn7kq2m9xa4pd", "sn7kq2m9xa4pd0x", "sn7kq2m9xa4p-0"} {
		if ValidID(PrefixSnapshot, bad) {
			t.Errorf("ValidID(%q) = true", bad)
		}
	}
}

func TestTransitions(t *testing.T) {
	t.Parallel()
	allowed := map[[2]string]bool{
		{"taking", "ready"}: true, {"taking", "failed"}: true, {"taking", "incomplete"}: true,
		{"ready", "deleting"}: true, {"ready", "unavailable"}: true, {"ready", "lost"}: true,
		{"deleting", "incomplete"}: true, {"unavailable", "ready"}: true, {"incomplete", "deleting"}: true,
	}
	states := []string{StateTaking, StateReady, StateFailed, StateIncomplete, StateDeleting, StateUnavailable, StateLost}
	for _, from := range states {
		for _, to := range states {
			if allowed[[2]string{from, to}] && !CanMove(from, to) {
				t.Errorf("%s → %s is a state change but refused", from, to)
			}
		}
	}
	for _, bad := range [][2]string{{"failed", "ready"}, {"lost", "ready"}, {"incomplete", "ready"}, {"taking", "deleting"}, {"deleting", "ready"}} {
		if CanMove(bad[0], bad[1]) {
			t.Errorf("%s → %s is not a state change but allowed", bad[0], bad[1])
		}
	}
}
