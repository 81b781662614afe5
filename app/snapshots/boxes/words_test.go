package boxes

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/internal/wordshape"
)

// TestRefusalWordsShape: every refusal the boxes say is a full sentence
// (or sentences): no space at either end or doubled, one full stop at the
// end, no verb of fmt left over, no doubled word, and its ‘’ paired; a
// release stopped by its held copy is told by its words.
func TestRefusalWordsShape(t *testing.T) {
	t.Parallel()
	const (
		sn  = "before the migration"
		box = "amber-fox"
		be  = "pve-1"
	)
	words := []string{
		onlyPersonMakesThreadWords, onlyPersonDeletesKeptWords, onlyPersonSeesBoxesWords, onlyPersonEmptiesTrashWords,
		onlyPersonHistoryWords, onlyPersonTemplatesWords, onlyPersonForgetsWords, onlyPlatformPresenceWords,
		noTemplateWords, noRecordsWords(be), threadTitleWords(200), boxIsAlreadyWords(box, snapshots.BoxReleasing),
		holdsGuestWords(box), templateSetsWords("dev", "command"), presenceThreadWords("th1"), terminalsBelowZeroWords,
		inTrashAlreadyWords(box), notInTrashWords(box), forgetInSettingsWords(be),
		templateKindWords, templateUserWords, envNameWords, templateLimitsWords, chooseBackendWords([]string{"local", be}),
		templateSourceWords(200), templateCommandWords(4096), templateEnvWords(64),
		releaseUnfinishedWords("pve-1 does not answer."), agentNamesTemplateWords,
	}
	for _, w := range words {
		wordshape.Check(t, w)
		if !strings.HasSuffix(w, ".") || strings.HasSuffix(w, "..") {
			t.Errorf("%q does not end with one full stop", w)
		}
	}
	if !isCopyFailed(CopyFailedWords(sn, "no room")) || isCopyFailed(releaseCouldNotDeleteWords(sn, "busy")) {
		t.Error("a release stopped by its held copy is not told by its words")
	}
}

// TestLogWordsShape: a release that stopped reads in the box's log as the
// release stopped, with its reason, and that nothing kept was deleted; a
// box made says where; every phrase the boxes log is a phrase after its
// kind, naming its snapshot in ‘’.
func TestLogWordsShape(t *testing.T) {
	t.Parallel()
	// The pages say these words after the kind (pagemodel's
	// TestBoxesEventLines): "amber-fox release stopped: Release did not
	// finish: pve-1 does not answer. Nothing kept was deleted.", "amber-fox
	// made on this host."
	stopped := logReleaseStoppedWords("Release did not finish: pve-1 does not answer.")
	if want := "Release did not finish: pve-1 does not answer. Nothing kept was deleted."; stopped != want {
		t.Errorf("logReleaseStoppedWords = %q, want %q", stopped, want)
	}
	if got := LogMadeOnWords("this host"); got != "made on this host" {
		t.Errorf("LogMadeOnWords = %q, want %q", got, "made on this host")
	}
	// Every other phrase the boxes log is a phrase after its kind: no full
	// stop at the end, and a snapshot it names in ‘’.
	const sn, id, box = "before the migration", "sn1", "amber-fox"
	at := time.Date(2026, 11, 29, 10, 42, 0, 0, time.UTC)
	yes, no := true, false
	named := []string{
		LogDeletedWithEarlierWords(sn, id, box), LogHeldCopyMadeWords(sn, "vm-9", "pve-1", true), LogHeldCopyRemadeWords(sn),
		LogForgottenWords(sn, id, "pve-2"),
	}
	others := []string{
		LogMadeOnWords("this host"),
		LogReleasedWords, LogHistorySettingsWords(nil),
		LogHistorySettingsWords(&yes), LogHistorySettingsWords(&no),
		LogTrashedWords(at, "", "", time.UTC),
		LogTrashedWords(at, "final", "", time.UTC), LogTrashedWords(at, "", "pve-1 takes no snapshots of it", time.UTC),
		LogUntrashedWords(true), LogUntrashedWords(false),
	}
	for _, w := range append(named, others...) {
		wordshape.Check(t, w)
		if strings.HasSuffix(w, ".") {
			t.Errorf("%q ends with a full stop: an event's words are a phrase after its kind", w)
		}
	}
	for _, w := range named {
		if !strings.Contains(w, "‘"+sn+"’") {
			t.Errorf("%q does not name the snapshot in ‘’", w)
		}
	}
}

// TestFailureWordsShape: what a failed release or restore from the trash
// says, and what boxsnap then observed, read as words: no space at either
// end or doubled, no verb of fmt left over, no doubled word, no two full
// stops, and a snapshot it names in ‘’; what boxsnap observed is a phrase,
// without a full stop.
func TestFailureWordsShape(t *testing.T) {
	t.Parallel()
	e := errors.New("pve-1 does not answer")
	words := []string{
		CopyFailedWords("a", copyIsWords("lost")),
		CopyFailedWords("a", copyNoStorageWords("it is locked")), CopyFailedWords("a", copyRoomWords("pve-1", 6e9, 13e9)),
		finalNoneWords("pve-1", "amber-fox"), finalNoPlanWords(e), finalFailedWords(e),
		untrashUnfinishedWords(untrashGoneWords("amber-fox")), untrashUnfinishedWords(untrashGuestWords("amber-fox", e)),
		untrashUnfinishedWords(untrashStartWords("amber-fox", e)), logReleaseStoppedWords(releaseUnfinishedWords("pve-1 does not answer.")),
	}
	observed := []string{observedNothingKeptGone, observedReadyNotInTrash, observedStillInTrash}
	for _, w := range append(words, observed...) {
		wordshape.Check(t, w)
		if strings.Contains(w, "..") {
			t.Errorf("%q holds two full stops", w)
		}
	}
	for _, w := range observed {
		if strings.HasSuffix(w, ".") || strings.ToLower(w[:1]) != w[:1] {
			t.Errorf("what boxsnap observed, %q, is not a phrase", w)
		}
	}
}

// TestUnfinishedWords: a release stopped by a held copy it could not make
// is said once, with what boxsnap then observed after it.
func TestUnfinishedWords(t *testing.T) {
	t.Parallel()
	got := snapshots.UnfinishedWords("The release", CopyFailedWords("Thu 09:15", "pve-1 has 6 GB free, and it needs 13 GB"), observedNothingKeptGone)
	want := "Release did not finish: boxsnap could not copy ‘Thu 09:15’ (pve-1 has 6 GB free, and it needs 13 GB); boxsnap then observed: nothing kept was deleted."
	if got != want {
		t.Errorf("UnfinishedWords\n got %q\nwant %q", got, want)
	}
}

// TestCopyFailedWords: a keep is confirmed only when it will last: a
// held copy that cannot be made stops the release, in these words.
func TestCopyFailedWords(t *testing.T) {
	t.Parallel()
	got := CopyFailedWords("Thu 09:15", "pve-1 has 6 GB free, and it needs 13 GB")
	want := "Release did not finish: boxsnap could not copy ‘Thu 09:15’ (pve-1 has 6 GB free, and it needs 13 GB)"
	if got != want {
		t.Errorf("CopyFailedWords\n got %q\nwant %q", got, want)
	}
}
