package fork

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestLogWordsFromSpec: the fork's new box's own log starts with made,
// "Forked from (source), (snapshot) (taken …)", word for word.
func TestLogWordsFromSpec(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 29, 10, 42, 0, 0, time.UTC)
	if got, want := logForkedFromWords("amber-fox", "before the migration", at, time.UTC),
		"Forked from amber-fox, ‘before the migration’ (taken 29 Nov 10:42)"; got != want {
		t.Errorf("made:\n got %q\nwant %q", got, want)
	}
}

// TestWordsShape: the fork's log phrases and failures read as words (no
// space at either end or doubled, no verb of fmt left over, a snapshot
// named in ‘’ paired), and its refusals are full sentences ending in one
// full stop.
func TestWordsShape(t *testing.T) {
	t.Parallel()
	const sn, box = "before the migration", "amber-fox"
	at := time.Date(2026, 11, 29, 10, 42, 0, 0, time.UTC)
	phrases := []string{
		logForkWords(sn, box), logForkFailedWords(sn, box, "no room"), logForkedFromWords(box, sn, at, time.UTC),
		failForkRecordWords("amber-fox-fork", errors.New("pve-1 does not answer")),
	}
	sentences := []string{
		forkCountWords(11, 10), forkNamesTakenWords([]string{"fix-2"}), forkNamesTakenWords([]string{"fix-1", "fix-3"}),
		forkCountReusedWords("rq1", 3), forkCountReusedWords("rq1", 0),
		notShippedWords(box, sn, "host-a"), forkNowElsewhereWords(box, "host-a"), LandsHereWords(box, "host-a", "host-b"),
	}
	for _, w := range append(phrases, sentences...) {
		if w == "" || strings.TrimSpace(w) != w || strings.Contains(w, "  ") || strings.Contains(w, "%!") {
			t.Errorf("%q: empty, spaces at an end or doubled, or a verb of fmt left over", w)
		}
		if strings.Count(w, "‘") != strings.Count(w, "’") {
			t.Errorf("%q: its ‘’ do not pair", w)
		}
	}
	for _, w := range sentences {
		if !strings.HasSuffix(w, ".") || strings.HasSuffix(w, "..") {
			t.Errorf("%q does not end with one full stop", w)
		}
	}
	for _, w := range phrases {
		if strings.HasSuffix(w, ".") {
			t.Errorf("the phrase %q ends with a full stop", w)
		}
	}
}
