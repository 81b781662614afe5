package contents

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// sentenceFaults says what is wrong with words read as sentences or
// phrases: spaces at an end or doubled, a verb of fmt left over, a doubled
// word, ‘’ that do not pair; "" when nothing is.
func sentenceFaults(w string) string {
	if w == "" || strings.TrimSpace(w) != w || strings.Contains(w, "  ") {
		return "empty, or spaces at an end or doubled"
	}
	if strings.Contains(w, "%!") {
		return "a verb of fmt left over"
	}
	fields := strings.Fields(w)
	for i := 1; i < len(fields); i++ {
		if strings.EqualFold(fields[i], fields[i-1]) {
			return "doubles " + fields[i]
		}
	}
	if strings.Count(w, "‘") != strings.Count(w, "’") {
		return "its ‘’ do not pair"
	}
	return ""
}

// TestRefusalWordsShape: every refusal Contents says is a full sentence
// (or sentences): no space at either end, a full stop at the end, no
// doubled word, no verb of fmt left over, and a snapshot it names in ‘’.
func TestRefusalWordsShape(t *testing.T) {
	t.Parallel()
	const (
		sn  = "before the migration"
		box = "amber-fox"
		be  = "pve-1"
	)
	named := []string{
		cannotBeSharedWords(sn, snapshots.StateWords(snapshots.StateFailed)), NothingInsideWords(sn, "lost"),
		noPathInWords("the file notes.txt", sn), cannotBeReadWords(sn, "part of it is missing."),
		compareSameBoxWords(sn), nothingToCompareWords(sn, "lost"), cannotBeExportedWords(sn, "lost"),
		cannotBeBaseWords(sn, "lost"), exportedAndBaseWords(sn),
	}
	others := []string{
		noShareCodeHereWords, shareRevokedWords, shareSnapshotGoneWords, cannotShareSecretsWords(be), cannotShareWords(be),
		noLiveShareCodeWords("sh1"), notAShareCodeWords(SharePrefix, len(SharePrefix)+43),
		shareExpiredWords("29 Nov 10:42"), shareSnapshotIsWords("lost"), shareCodesFullWords(MaxLiveShares),
		notAPathWords, pathTooLongWords, topFolderWords, nameAFileWords, backendSaysWords("No such file"),
		backendSaysWords("No such file."), absolutePathWords("/etc"), climbsOutWords("../x"),
		linkNeverFollowedWords("the link l", "/etc"), notFileOrFolderWords("the pipe p"), NoBoxToCompareWords(box, snapshots.BoxReleasing),
		nameOneToExportWords, chooseImportWords, importFailedWords, cannotExportWords(be),
		badArchiveWords("a.tar", "it is not an export file"), importRunningWords("op1", "copying"),
		importOneBoxWords("a.tar", box, "b.tar", "brisk-lake"), releasedNoImportWords(box), noBackendImportsWords("tart"),
		CannotImportWords(be), alreadyHereWords("sn1", box), CannotBrowseWords(be),
	}
	check := func(w string) {
		t.Helper()
		if f := sentenceFaults(w); f != "" {
			t.Errorf("%q: %s", w, f)
		}
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

// TestLogWordsShape: every box log event's words Contents writes are a
// phrase after its kind: no space at either end, no verb of fmt left over,
// no doubled word, no full stop at the end (the line that says it adds
// one), and a snapshot it names in ‘’.
func TestLogWordsShape(t *testing.T) {
	t.Parallel()
	const sn = "before the migration"
	at := time.Date(2026, 11, 29, 10, 42, 0, 0, time.UTC)
	named := []string{
		logMadeByImportWords(sn), logExportedWords([]string{sn}, ""), logExportedWords([]string{"b", sn}, "c"),
		logImportedWords([]string{sn}, true), logSharedWords(sn, at, nil, time.UTC), logShareRedeemedWords(sn, []string{".ssh"}),
		logDownloadedWords("notes.txt", 512, false, sn), logDownloadedWords("src", 0, true, sn),
	}
	others := []string{logMadeByImportWords(""), logImportedWords(nil, false), logShareRevokedWords}
	check := func(w string) {
		t.Helper()
		if f := sentenceFaults(w); f != "" {
			t.Errorf("%q: %s", w, f)
		}
		if strings.HasSuffix(w, ".") {
			t.Errorf("%q ends with a full stop: an event's words are a phrase after its kind", w)
		}
	}
	for _, w := range named {
		check(w)
		if !strings.Contains(w, "‘before the migration’") {
			t.Errorf("%q does not name the snapshot in ‘’", w)
		}
	}
	for _, w := range others {
		check(w)
	}
}

// TestFailureWordsShape: what a failed import says reads as words: no
// space at either end or doubled, no verb of fmt left over, no doubled
// word, no two full stops.
func TestFailureWordsShape(t *testing.T) {
	t.Parallel()
	for _, w := range []string{failImportParams, failImportWords(errors.New("pve-1 does not answer"))} {
		if f := sentenceFaults(w); f != "" || strings.Contains(w, "..") {
			t.Errorf("%q: %s, or two full stops", w, f)
		}
	}
}

// TestCopyLeftOutNothing: a copy that left nothing out says so, never
// "without nothing".
func TestCopyLeftOutNothing(t *testing.T) {
	t.Parallel()
	for _, got := range []string{logShareRedeemedWords("before", nil), "Shared from amber-fox" + withoutWords(nil) + "."} {
		if strings.Contains(got, "without nothing") || !strings.Contains(got, "it held none of the files a copy leaves out") {
			t.Errorf("a copy that left nothing out reads %q", got)
		}
	}
	if got := logShareRedeemedWords("before", []string{".ssh"}); got != "a copy of ‘before’ handed out, without .ssh" {
		t.Errorf("a copy without .ssh reads %q", got)
	}
}
