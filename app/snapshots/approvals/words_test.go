package approvals

import (
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/internal/wordshape"
)

// TestRefusalWordsFromSpec: the form's words: the agent that asked ends
// its turn, and the words say who asked whom; told after the restore may
// have ended, an approval says what happened in the past tense.
func TestRefusalWordsFromSpec(t *testing.T) {
	t.Parallel()
	if got := askedWords("dev-desk", "before the upgrade", "rq1", true); !strings.HasPrefix(got, "You asked the person to restore dev-desk to ‘before the upgrade’") ||
		!strings.HasSuffix(got, "End your turn now: nothing you do on dev-desk after this survives the restore.") {
		t.Errorf("an agent's request reads %q", got)
	}
	if got := approvedWords("rq1", "10:42", "dev-desk", "before the upgrade", "op1"); strings.Contains(got, "is being") || !strings.Contains(got, "started then") {
		t.Errorf("an approval reads %q", got)
	}
}

// TestRefusalWordsShape: every refusal and answer of a request is a full
// sentence (or sentences): no space at either end, a full stop at the end,
// no doubled word, no verb of fmt left over, and a snapshot it names in ‘’.
func TestRefusalWordsShape(t *testing.T) {
	t.Parallel()
	const (
		sn  = "before the migration"
		box = "amber-fox"
	)
	named := []string{
		askedWords(box, sn, "rq1", true), askedWords(box, sn, "rq1", false),
		approvedWords("rq1", "10:42", box, sn, "op1"), declinedWords("rq1", box, sn),
	}
	others := []string{
		onlyPersonAnswersWords, noRequestWords("rq1"),
		planChangedWords("Stops amber-fox."), requestExpiredWords("rq1", "10:42"), requestWasWords("rq1", "denied"),
		requestAnsweredWords("rq1"), HeldWords(box),
		requestExpiredUnansweredWords("rq1", "10:42"), requestSnapshotGoneWords, planChangedTooOftenWords("rq1", 3),
		requestCouldNotRunWords("rq1", "No snapshot sn1."),
	}
	check := func(w string) {
		t.Helper()
		if !strings.HasSuffix(w, ".") || strings.HasSuffix(w, "..") {
			t.Errorf("%q does not end with one full stop", w)
		}
		wordshape.Check(t, w)
	}
	for _, w := range named {
		check(w)
		if !strings.Contains(w, "‘"+sn+"’") {
			t.Errorf("%q does not name the snapshot in ‘’", w)
		}
	}
	for _, w := range others {
		check(w)
	}
}

// TestLogWordsShape: a request's box log events' words are a phrase after
// its kind: no space at either end, no verb of fmt left over, no doubled
// word, no full stop at the end (the line that says it adds one), and the
// snapshot it names in ‘’.
func TestLogWordsShape(t *testing.T) {
	t.Parallel()
	for _, w := range []string{logRequestedWords("before the migration", "rq1"), logDeclinedWords("rq1", "before the migration")} {
		if strings.HasSuffix(w, ".") {
			t.Errorf("%q ends with a full stop: an event's words are a phrase after its kind", w)
		}
		wordshape.Check(t, w)
		if !strings.Contains(w, "‘before the migration’") {
			t.Errorf("%q does not name the snapshot in ‘’", w)
		}
	}
}
