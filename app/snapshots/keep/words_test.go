package keep

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/internal/wordshape"
)

// TestRefusalWordsShape: every refusal of a keep is a full sentence: one
// full stop at its end.
func TestRefusalWordsShape(t *testing.T) {
	t.Parallel()
	const box, sn = "amber-fox", "before the migration"
	for _, w := range []string{keptUndoCountsWords(box, 5, 5, snapshots.DeleteWords([]string{"‘" + sn + "’"}, 0)),
		keptUndoCountsWords(box, 5, 5, ""), keepFromTodayWords, keepAtMostWords(365),
		savingPassesWords(box, 5, 5, sn, ""), undoNeverAutomaticWords(sn), onlyPersonDeletesHistoryWords,
		namedAlreadyWords(box, sn), DeleteHistoryWords(box)} {
		wordshape.Check(t, w)
		if !strings.HasSuffix(w, ".") || strings.HasSuffix(w, "..") {
			t.Errorf("%q does not end with one full stop", w)
		}
	}
}

// TestLogWordsFromSpec: snapshot-deleted says why, as the box log says it
// (by you, by the agent, by a boxsnap command).
func TestLogWordsFromSpec(t *testing.T) {
	t.Parallel()
	for kind, want := range map[snapshots.CallerKind]string{snapshots.CallerOwner: "by you", snapshots.CallerAgent: "by the agent", snapshots.CallerCLI: "by a boxsnap command"} {
		if got := logDeletedWords("a", "sn1", nil, snapshots.ByWhy(snapshots.Caller{Kind: kind})); !strings.HasSuffix(got, ", "+want) {
			t.Errorf("a delete %s logs %q", want, got)
		}
	}
}

// TestLogWordsShape: the box log's kept and deleted events are phrases,
// with no full stop at the end, and name their snapshot in ‘’.
func TestLogWordsShape(t *testing.T) {
	t.Parallel()
	const sn, id, box = "before the migration", "sn1", "amber-fox"
	at := time.Date(2026, 11, 29, 10, 42, 0, 0, time.UTC)
	freed := int64(1_200_000_000)
	named := []string{logDeletedWords(sn, id, &freed, "by you"), logDeletedWords(sn, id, nil, "by you"), logKeptWords(sn, at), logSavedWords(sn, id)}
	for _, w := range append(named, logEarlierGuestDeletedWords(box, "vm-9")) {
		wordshape.Check(t, w)
		if strings.HasSuffix(w, ".") {
			t.Errorf("%q ends with a full stop", w)
		}
	}
	for _, w := range named {
		if !strings.Contains(w, "‘"+sn+"’") {
			t.Errorf("%q does not name the snapshot in ‘’", w)
		}
	}
}

// TestFailureWordsShape: what a failed keep or delete says is read as
// words, with no two full stops; what boxsnap observed is a phrase,
// without a full stop.
func TestFailureWordsShape(t *testing.T) {
	t.Parallel()
	e := errors.New("pve-1 does not answer")
	for _, w := range []string{failLabelRefusedWords("pve-1", e), deletePartWayWords(e), observedAlreadyGone} {
		wordshape.Check(t, w)
		if strings.Contains(w, "..") {
			t.Errorf("%q holds two full stops", w)
		}
	}
	if w := observedAlreadyGone; strings.HasSuffix(w, ".") || strings.ToLower(w[:1]) != w[:1] {
		t.Errorf("what boxsnap observed, %q, is not a phrase", w)
	}
}
