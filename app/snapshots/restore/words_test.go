package restore

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// wordsRead fails t on words that do not read as words: empty, spaces at an
// end or doubled, a verb of fmt left over, a doubled word, ‘’ that do not
// pair.
func wordsRead(t *testing.T, w string) {
	t.Helper()
	if w == "" || strings.TrimSpace(w) != w || strings.Contains(w, "  ") || strings.Contains(w, "%!") {
		t.Errorf("%q: empty, spaces at an end or doubled, or a verb of fmt left over", w)
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

// TestRestoreRefusalWordsShape: a restore's and a reset's refusals are full
// sentences: no space at either end, a full stop at the end, no doubled
// word, no verb of fmt left over, and a snapshot it names in ‘’.
func TestRestoreRefusalWordsShape(t *testing.T) {
	t.Parallel()
	const (
		sn   = "before the migration"
		box  = "amber-fox"
		be   = "pve-1"
		full = "pve-1's storage is 91 % full, over the 85 % boxsnap keeps free."
	)
	named := []string{otherBoxForkInsteadWords(sn, box)}
	others := []string{
		onlyPersonRestoresMemoryWords, agentsDoNotResetWords(box),
		beingReleasedWords(box), boxIsWords(box, snapshots.BoxReleasing),
		guardNowWords(box, "restored", "Work is unsaved."), restoreGuardWords(box, "Work is unsaved."),
		resetGuardWords(box, "Work is unsaved."),
		notResetWithoutUndoWords(snapshots.NoUndoCanBeTakenWords(box, be)),
		noRoomForUndoWords(full), orUntickUndoWords(noRoomForUndoWords(full)),
		cannotReadLoginsWords(be, box), notFromTemplateWords(box), templateElsewhereWords("dev", be, box, "local"),
		ResetDoneWords(box, ResetResult{Template: "dev", Kept: []string{".ssh"}, Skipped: []string{"big is 2.0 MiB, over 1 MiB"}, UndoName: "before the reset at 10:42"}),
		ResetNotBuiltWords(snapshots.Backend{Label: be}, &snapshots.Box{Name: box}),
		noUndoNotRestoredWords(box, be), ExecutionRestoresOffWords,
		executionMachineRefusalWords([]string{"Fix the sign-in flow"}, box),
		executionMachineRefusalWords([]string{"Fix the sign-in flow", "Write the API guide"}, box),
	}
	check := func(w string) {
		t.Helper()
		wordsRead(t, w)
		if !strings.HasSuffix(w, ".") || strings.HasSuffix(w, "..") {
			t.Errorf("%q does not end with one full stop", w)
		}
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

// TestRestoreLogWords: the box log's words for a restore asked read word for
// word as the person is meant to read them; every phrase a restore, a reset
// or a box set straight logs is a phrase after its kind, without a full
// stop, and names its snapshot in ‘’.
func TestRestoreLogWords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ got, want string }{
		// restore-asked: the snapshot, and "no undo".
		{logRestoreAskedWords("before the migration", "", true, ""), "to ‘before the migration’, no undo"},
		{logRestoreAskedWords("before the migration", "before the restore at 10:42", false, ""),
			"to ‘before the migration’; undo ‘before the restore at 10:42’"},
	} {
		if c.got != c.want {
			t.Errorf("restore-asked:\n got %q\nwant %q", c.got, c.want)
		}
	}
	const sn, box = "before the migration", "amber-fox"
	at := time.Date(2026, 11, 29, 10, 42, 0, 0, time.UTC)
	named := []string{
		logRestoreAskedWords(sn, "", true, ""), logRestoreAskedWords(sn, "u", false, ", on a yes given by the person at 10:42"),
		logRestoreAskedWords(sn, "", false, ""), logRestoredWords(sn, at, "", &providers.BoxSize{Cores: 2, MemoryBytes: 2 << 30}, time.UTC),
		LogHeldUndoTakenWords(sn, "sn1", "vm-9", "pve-1"),
	}
	others := []string{
		logEarlierGuestWords("vm-9", box, 2, "vm-10"),
		logSetStraightWords("the restore", nil, ""), logSetStraightWords("the restore", []string{"its keys"}, ""),
		resetWords(ResetResult{Template: "dev", Kept: []string{".ssh"}}),
	}
	check := func(w string) {
		t.Helper()
		wordsRead(t, w)
		if strings.HasSuffix(w, ".") {
			t.Errorf("%q ends with a full stop: an event's words are a phrase after its kind", w)
		}
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

// TestRestoreFailureWordsShape: what a failed restore or reset says, and what
// boxsnap then observed, read as words: no space at either end or doubled,
// no verb of fmt left over, no doubled word, no two full stops; what
// boxsnap observed is a phrase, without a full stop.
func TestRestoreFailureWordsShape(t *testing.T) {
	t.Parallel()
	e := errors.New("pve-1 does not answer")
	words := []string{
		failTargetGone, failNothingChangedWords("the snapshot a is lost"), failUndoWords("no room", ""), failUndoWords("no room", "it is locked"),
		resetUnfinishedWords(resetWhyUndo(e)), resetUnfinishedWords(resetWhyStop(e)), resetUnfinishedWords(resetWhyNoUndo(resetWhyFresh(e))),
		resetUnfinishedWords(resetWhyAccess(e)), resetUnfinishedWords(resetWhyStart(e)),
		resetNotBackWords(resetWhyFresh(e), "amber-fox", e, "before the reset at 10:42"),
		resetUndoneWords(resetWhyFresh(e), "amber-fox", "before the reset at 10:42"),
		logThenWords(resetUnfinishedWords(resetWhyStop(e)), observedNothingChanged),
	}
	observed := []string{observedNothingChanged,
		observedRestoreWords(observedFilesRestoredAccess, observedBoxStartedAgain), observedResetStopped, observedMayBeFresh, observedFreshNoLogins, observedAsBeforeReset,
		observedNoAnswerWords("pve-1", "rollback"),
		observedRestoreWords(observedFilesAsTheyWere, observedBoxStartedAgain), observedRestoreWords(observedFilesPutBack, observedBoxRuns),
		observedRestoreWords(observedFilesRestored, observedStartFailedWords("it is locked")),
		observedRestoreWords(observedFilesPartWayWords(observedUndoNotReady), observedBoxStoppedAsBefore),
		observedRestoreWords(observedFilesPartWayWords(observedNoUndo), ""), observedRestoreWords(observedFilesRestored, "")}
	for _, w := range append(words, observed...) {
		wordsRead(t, w)
		if strings.Contains(w, "..") {
			t.Errorf("%q holds two full stops", w)
		}
		if strings.Count(w, "boxsnap") > 1 && strings.Contains(w, "boxsnap it") {
			t.Errorf("%q says boxsnap twice, once where a verb goes", w)
		}
	}
	for _, w := range observed {
		if strings.HasSuffix(w, ".") || strings.ToLower(w[:1]) != w[:1] {
			t.Errorf("what boxsnap observed, %q, is not a phrase", w)
		}
	}
}

// TestRestoreUnfinishedWords: a restore that failed is said as every failed
// operation is ("The restore did not finish: …"), once, with one full
// stop, and what boxsnap then observed after it.
func TestRestoreUnfinishedWords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ what, why, observed, want string }{
		{"The restore", failUndoWords("no room", ""), observedNothingChanged,
			"The restore did not finish: could not take the undo: no room; boxsnap then observed: nothing changed."},
		{"The restore at 10:42", snapshots.LogRestoreFailedWords("a", "adopt", "it did not finish in time", observedRestoreWords(observedFilesAsTheyWere, observedBoxStartedAgain)), "",
			"The restore at 10:42 did not finish: to ‘a’ stopped at adopt: it did not finish in time; boxsnap then observed: the files are as they were and the box was started again."},
	} {
		if got := snapshots.UnfinishedWords(c.what, c.why, c.observed); got != c.want {
			t.Errorf("UnfinishedWords(%q, %q, %q)\n got %q\nwant %q", c.what, c.why, c.observed, got, c.want)
		}
	}
}
