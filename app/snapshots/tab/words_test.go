package tab

import (
	"strings"
	"testing"
)

// TestTabWords: each of the tab's own words is one sentence, ending with
// one full stop, with no spaces doubled or at an end.
func TestTabWords(t *testing.T) {
	for _, w := range []string{sortIsWords, onlyPersonSeesCountsWords} {
		if w == "" || strings.TrimSpace(w) != w || strings.Contains(w, "  ") {
			t.Errorf("%q: empty, or spaces at an end or doubled", w)
		}
		if !strings.HasSuffix(w, ".") || strings.HasSuffix(w, "..") {
			t.Errorf("%q does not end with one full stop", w)
		}
	}
}
