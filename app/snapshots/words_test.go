package snapshots

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/internal/wordshape"
	"github.com/boxsnap/boxsnap/providers"
)

// TestHoldsWords: what a snapshot holds is "disk", "disk and memory" or
// "device", the three things a snapshot can hold.
func TestHoldsWords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ holds, scope, want string }{
		{string(providers.HoldsDisk), string(providers.ScopeBox), "disk"},
		{string(providers.HoldsDiskAndMemory), string(providers.ScopeBox), "disk and memory"},
		{string(providers.HoldsDiskAndMemory), string(providers.ScopeDevice), "device"},
		{"device", "", "device"},
		{"", "", "disk"},
	} {
		if got := HoldsWords(c.holds, c.scope); got != c.want {
			t.Errorf("HoldsWords(%q, %q) = %q, want %q", c.holds, c.scope, got, c.want)
		}
	}
}

// TestPriceWords: a price is said as the provider gives it, in its own
// currency ("$0.056 a day", never converted); an unknown price is shown as unknown, never as free; no
// price, the person's own storage, is "no charge" in a dialog.
func TestPriceWords(t *testing.T) {
	t.Parallel()
	price := func(amount float64, currency, per string) *providers.Price {
		return &providers.Price{Amount: amount, Currency: currency, Per: per, Known: true}
	}
	for _, c := range []struct {
		p    *providers.Price
		want string
	}{
		{price(0.056, "USD", "day"), "$0.056 a day"},
		{price(0.12, "USD", "day"), "$0.12 a day"},
		{price(5, "USD", "month"), "$5.00 a month"},
		{price(0.1, "EUR", "month"), "€0.10 a month"},
		{price(0.0125, "EUR", "GB-month"), "€0.0125 per GB a month"},
		{price(0.3, "GBP", "day"), "£0.30 a day"},
		{price(2, "CHF", "month"), "CHF 2.00 a month"},
		{&providers.Price{Currency: "USD", Per: "day"}, "unknown"},
		{nil, ""},
	} {
		if got := PriceWords(c.p); got != c.want {
			t.Errorf("PriceWords(%+v) = %q, want %q", c.p, got, c.want)
		}
	}
	for _, c := range []struct {
		amount   float64
		currency string
		want     string
	}{{5.04, "USD", "$5.04"}, {1.2, "EUR", "€1.20"}, {0.3, "GBP", "£0.30"}, {5, "USD", "$5.00"}, {3.6, "USD", "$3.60"}, {2, "CHF", "CHF 2.00"}} {
		if got := Money(c.amount, c.currency); got != c.want {
			t.Errorf("Money(%v, %q) = %q, want %q", c.amount, c.currency, got, c.want)
		}
	}
}

// TestPriceOf: a recorded price reads back as it was; none is nil; one
// that cannot be read is unknown, never free.
func TestPriceOf(t *testing.T) {
	t.Parallel()
	raw, _ := json.Marshal(providers.Price{Amount: 0.056, Currency: "USD", Per: "day", Known: true})
	if got := PriceWords(PriceOf(raw)); got != "$0.056 a day" {
		t.Errorf("a recorded price reads %q", got)
	}
	for _, none := range []json.RawMessage{nil, json.RawMessage("null")} {
		if p := PriceOf(none); p != nil {
			t.Errorf("PriceOf(%q) = %+v, want nil", none, p)
		}
	}
}

// TestSizeWords: sizes in GB for snapshots, as providers bill; GiB for a
// box's memory and disk; a size boxsnap cannot know is shown as unknown,
// and a whole size says some is shared with the box.
func TestSizeWords(t *testing.T) {
	t.Parallel()
	n := func(v int64) *int64 { return &v }
	whole, own := "whole", "own"
	for _, c := range []struct {
		got, want string
	}{
		{GB(1_200_000_000), "1.2 GB"},
		{GB(13_000_000_000), "13 GB"},
		{GB(52_000_000), "52 MB"},
		{GB(1500), "2 KB"},
		{GiB(16 << 30), "16 GiB"},
		{GiB(3 << 29), "1.5 GiB"},
		{SizeOfWords(n(1_200_000_000), &own), "1.2 GB"},
		{SizeOfWords(n(1_200_000_000), &whole), "1.2 GB, some shared with the box"},
		{SizeOfWords(nil, nil), "unknown"},
		{FileSizeWords(1), "1 byte"},
		{FileSizeWords(512), "512 bytes"},
		{FileSizeWords(2_400_000_000), "2.4 GB"},
		{DurationWords(850 * time.Millisecond), "850 ms"},
		{DurationWords(1200 * time.Millisecond), "1.2 s"},
		{DurationWords(125 * time.Second), "2m5s"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// TestStepWords: boxsnap's words for what it could not confirm name the operation, the box and the step it
// was at: "bb-box could not confirm the restore of amber-fox: it was
// rolling back when bb-box restarted".
func TestStepWords(t *testing.T) {
	t.Parallel()
	op := &Operation{Kind: OpRestore, Step: string(providers.StepRollback)}
	if got := UnknownWords("amber-fox", op); got != "boxsnap could not confirm the restore of amber-fox: it was rolling back when boxsnap restarted." {
		t.Errorf("UnknownWords = %q", got)
	}
	seen := "the box is running"
	op = &Operation{Kind: OpDelete, Step: StepDelete, Observed: &seen}
	if got := UnknownWords("amber-fox", op); got != "boxsnap could not confirm the delete of amber-fox: it was deleting the snapshot when boxsnap restarted (the box is running)." {
		t.Errorf("UnknownWords = %q", got)
	}
}

// TestRefusalWordsFromSpec: the refusals the specification gives word for
// word read as it writes them ("bb-box" is boxsnap here).
func TestRefusalWordsFromSpec(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ what, got, want string }{
		// The box page's card: a backend with no snapshots.
		{"no snapshots", NoSnapshotsWords("the SSH host pool"), "Boxes on the SSH host pool have no snapshots."},
		// A guest its host has locked.
		{"locked", LockedWords("Proxmox", "amber-fox", "rollback", "Run pct unlock 214 on pve-1"),
			"Proxmox left amber-fox locked (rollback). Run pct unlock 214 on pve-1."},
		{"locked", LockedWords("Proxmox", "amber-fox", "rollback", "Run pct unlock 214 on pve-1."),
			"Proxmox left amber-fox locked (rollback). Run pct unlock 214 on pve-1."},
		// The paid ceiling.
		{"ceiling", CeilingWords("boat.dev", 5.04, 5, "USD"),
			"It would bring snapshots held on boat.dev to about $5.04 a month, past your ceiling of $5.00. Delete one, or raise the ceiling in Settings, Snapshots, Paid snapshots."},
		// An operation a restart left unconfirmed, with Check now.
		{"check now", checkNowFirstWords(UnknownWords("amber-fox", &Operation{Kind: OpRestore, Step: string(providers.StepRollback)})),
			"boxsnap could not confirm the restore of amber-fox: it was rolling back when boxsnap restarted. Check now first."},
		// Snapshots the caller may not see: "and others you cannot see".
		{"unseen", DeleteWords([]string{"‘Thu 09:15’"}, 2), "Delete one to free it: ‘Thu 09:15’, and others you cannot see."},
	} {
		if c.got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.what, c.got, c.want)
		}
	}
}

// TestRefusalWordsShape: every other refusal is a full sentence (or
// sentences): no space at either end, a full stop at the end, no doubled
// word, no verb of fmt left over, and a snapshot it names in ‘’.
func TestRefusalWordsShape(t *testing.T) {
	t.Parallel()
	const (
		sn  = "before the migration"
		box = "amber-fox"
		be  = "pve-1"
	)
	named := []string{
		keptOnlyPersonWords(sn, "delete"), notThisThreadsWords(sn), noSnapshotNamedWords(sn, box),
		RenewNotKeptWords(sn),
		inUseWords(sn, pinWords(Pin{Kind: OpRestore}, time.UTC)), savedNotThinnedWords(sn), undoNotThinnedWords(sn),
		keptNeverDeletedWords(sn), keptUntilWords(sn, "29 Nov"), personsNeverDeletedWords(sn), undoNotEvictedWords(sn),
		notAnUndoWords(sn), cannotBeWords(sn, StateWords(StateTaking), changeWords(ChangeRestore)),
		stillBeingTakenWords(sn), alreadyDeletingWords(sn), unavailableWords(sn), snapshotIsWords(sn, StateWords(StateLost)),
		earlierGuestForkOnlyWords(sn, box), heldCopyForkInsteadWords(sn), notKeptWords(sn), outlivesBoxWords(sn),
		SavedAlreadyWords(sn), AutomaticAlreadyWords(sn),
		CannotBeForkedWords(sn, "on "+be),
	}
	others := []string{
		SignInWords, NotAllowedWords, onlyPersonExportsWords, onlyPersonImportsWords, onlyPersonSharesWords,
		onlyPersonKeepsWords, onlyPersonRenamesWords, onlyPersonAdoptsWords,
		onlyPersonSettingsWords,
		notByItselfWords("restore"), onlyPersonForksExecutionWords(box), onlyThreadReleasesWords(box),
		agentLeavesOutWords("command"),
		noSnapshotWords("sn123"), noBoxWords(box), noOperationWords("op123"), NoThreadWords("th1"),
		NoUndoToGoBackWords(box),
		nameEmptyWords, nameControlWords, noteNotTextWords, NameTakenWords, nameTooLongWords(80, 81), noteTooLongWords(2000),
		notUTF8Words("A note"), lineControlWords("A box's name"), textControlWords("A note"),
		MachineNameWords("A box's name"),
		requestIDUsedWords("rq1", OpTake, "op123"),
		backendNotInSettingsWords(be),
		noAnswerWords(be, box), guestGoneWords(box, "Proxmox"),
		storageFullWords(be, 91, 85, ""), storageFullWords(be, 91, 85, DeleteWords([]string{"‘a’ of b"}, 0)),
		metadataFullWords(be, 81, 80, DeleteWords(nil, 1)),
		priceUnknownOnlyPersonWords("boat.dev"),
		KeepDaysWords(365), CannotBeKeptWords(box),
		ReplaceTrueWords(box), CannotBeRestoredOnWords(box, be),
		NoUndoCanBeTakenWords(box, be),
		BoxExistsWords(box),
		ShareDaysWords(30),
		HistoryGiBWords(1000), historyDaysWords(30), checkSecondsWords(be, 10, 3600),
		AfterNotAPlaceWords, PageHoldsWords,
		perBoxRangeWords(1, 50), roomRangeWords(50, 95), approvalRangeWords(60), alsoRemovePathWords("../x"),
		trashRangeWords(720), ceilingNumberWords("boat.dev"), ceilingBelowZeroWords("boat.dev"),
		OnlyPersonSettingsWords, NoHistoryToDeleteWords(box),
		NoRequestsWords, NoTemplatesWords, SavedWords(sn, " of "+box, box),
		UnsavedWords(sn, ""), UnsavedWords(sn, " (sn_1)"), RevokedWords(""), RevokedWords("sh_1"),
		TrashedWords(box, time.Date(2026, 11, 29, 10, 42, 0, 0, time.UTC), time.UTC),
		UntrashedWords(box, true), UntrashedWords(box, false),
		TrashCostWords("proxmox"), TrashCostWords("docker"), TrashCostWords("local"), TrashCostWords("tart"),
		AlwaysWithUndoWords(box),
	}
	check := func(w string) {
		t.Helper()
		wordshape.Check(t, w)
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

// logWordsForShape is every box log phrase the kernel's words.go says,
// each with its snapshot's name ‘before the migration’ where it names
// one; package boxes tests the phrases it alone says.
func logWordsForShape() (named, others []string) {
	const sn, id = "before the migration", "sn1"
	named = []string{
		LogRestoreFailedWords(sn, "", "it failed", "nothing changed"), LogRestoreFailedWords(sn, "rollback", "it failed", "nothing changed"),
		LogUnkeptWords(sn, true), LogUnkeptWords(sn, false),
	}
	return named, others
}

// TestLogWordsShape: every box log event's words are a phrase after its
// kind: no space at either end, no verb of fmt left over, no doubled
// word, no full stop at the end (the line that says it adds one), and a
// snapshot it names in ‘’.
func TestLogWordsShape(t *testing.T) {
	t.Parallel()
	named, others := logWordsForShape()
	check := func(w string) {
		t.Helper()
		wordshape.Check(t, w)
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

// TestFailureWordsShape: what a failed operation says, and what boxsnap
// then observed, read as words: no space at either end or doubled, no
// verb of fmt left over, no doubled word (a reset's "boxsnap it is fresh,
// but boxsnap could not start it" was), no two full stops, and a snapshot
// it names in ‘’.
func TestFailureWordsShape(t *testing.T) {
	t.Parallel()
	words := []string{
		FailSnapshotGone,
	}
	for _, w := range words {
		wordshape.Check(t, w)
		if strings.Contains(w, "..") {
			t.Errorf("%q holds two full stops", w)
		}
		if strings.Count(w, "boxsnap") > 1 && strings.Contains(w, "boxsnap it") {
			t.Errorf("%q says boxsnap twice, once where a verb goes", w)
		}
	}
}

// TestUnfinishedWords: an operation that failed is said as a failed
// release is ("Release did not finish: …"), once, with one full stop, and
// what boxsnap then observed after it.
func TestUnfinishedWords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ what, why, observed, want string }{
		{"The fork", "pve-1 does not answer.", "", "The fork did not finish: pve-1 does not answer."},
		{"The restore of amber-fox", "", "", "The restore of amber-fox did not finish."},
	} {
		if got := UnfinishedWords(c.what, c.why, c.observed); got != c.want {
			t.Errorf("UnfinishedWords(%q, %q, %q)\n got %q\nwant %q", c.what, c.why, c.observed, got, c.want)
		}
	}
}
