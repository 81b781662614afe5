package web

import (
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/internal/wordshape"
)

// TestRefusalWordsShape: the sentences app/web's handlers say are full
// sentences: read as words, with one full stop at the end.
func TestRefusalWordsShape(t *testing.T) {
	t.Parallel()
	for _, w := range []string{ReleasingWords("amber-fox"), StartingWords("amber-fox")} {
		wordshape.Check(t, w)
		if !strings.HasSuffix(w, ".") || strings.HasSuffix(w, "..") {
			t.Errorf("%q does not end with one full stop", w)
		}
	}
}
