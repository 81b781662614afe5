package wordshape

import (
	"strings"
	"testing"
)

// Check fails t if w is not read as words: no space at either end or
// doubled, no verb of fmt left over, no doubled word, and its ‘’ paired.
func Check(t testing.TB, w string) {
	t.Helper()
	if w == "" || strings.TrimSpace(w) != w || strings.Contains(w, "  ") {
		t.Errorf("%q: empty, or spaces at an end or doubled", w)
	}
	if strings.Contains(w, "%!") {
		t.Errorf("%q holds a verb of fmt left over", w)
	}
	fields := strings.Fields(w)
	for i := 1; i < len(fields); i++ {
		if strings.EqualFold(fields[i], fields[i-1]) {
			t.Errorf("%q doubles %q", w, fields[i])
		}
	}
	if strings.Count(w, "‘") != strings.Count(w, "’") {
		t.Errorf("%q: its ‘’ do not pair", w)
	}
}
