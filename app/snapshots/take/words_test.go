package take

import (
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/internal/wordshape"
)

// TestRefusalWordsShape: every refusal of a take is a full sentence: one
// full stop at its end.
func TestRefusalWordsShape(t *testing.T) {
	t.Parallel()
	const box = "amber-fox"
	for _, w := range []string{releasedTakesNoneWords(box), diskOnlyWords(box), perBoxLimitWords(box, 5, 5, ""),
		perBoxLimitWords(box, 5, 5, snapshots.DeleteWords([]string{"‘Thu 09:15’"}, 2))} {
		wordshape.Check(t, w)
		if !strings.HasSuffix(w, ".") || strings.HasSuffix(w, "..") {
			t.Errorf("%q does not end with one full stop", w)
		}
	}
}

// TestLogWordsShape: the box log's events of a take name their snapshot in
// ‘’, and snapshot-taken says its name, ID, what it holds and how long.
func TestLogWordsShape(t *testing.T) {
	t.Parallel()
	const sn, id = "before the migration", "sn1"
	for _, w := range []string{logTakenWords(sn, id, "disk", time.Second), logTakeFailedWords(sn, "no room"),
		logTakeIncompleteWords(sn, "no room"), logUndoTakenWords(sn, id, "the undo of this restore", "disk")} {
		wordshape.Check(t, w)
		if !strings.Contains(w, "‘"+sn+"’") {
			t.Errorf("%q does not name the snapshot in ‘’", w)
		}
	}
	if got := logTakenWords(sn, id, snapshots.HoldsWords("disk", ""), 1200*time.Millisecond); got != "‘before the migration’ (sn1), disk, in 1.2 s" {
		t.Errorf("snapshot-taken logs %q", got)
	}
}

// TestFailureWordsShape: what a failed take says is read as words, with no
// two full stops.
func TestFailureWordsShape(t *testing.T) {
	t.Parallel()
	for _, w := range []string{failTakeSnapshotGone, failTakeBoxGone, failPartExistsWords("no room")} {
		wordshape.Check(t, w)
		if strings.Contains(w, "..") {
			t.Errorf("%q holds two full stops", w)
		}
	}
}
