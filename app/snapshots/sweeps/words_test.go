package sweeps

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/internal/wordshape"
	"github.com/boxsnap/boxsnap/providers"
)

// TestLogWordsFromSpec: the box log's words of the sweeps that the
// specification's table of the box log gives word for word read as they
// are written ("bb-box" is boxsnap here).
func TestLogWordsFromSpec(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 29, 10, 42, 0, 0, time.UTC)
	// Without a rollback task, "its snapshots changed outside bb-box".
	got := outsideWords(snapshots.EvChangedOutside, providers.Task{Type: "vzsnapshot", Ref: providers.TaskRef{ID: "UPID:1"}, User: "root@pam", Start: at}, "", time.UTC)
	if want := "its snapshots changed outside boxsnap: vzsnapshot task UPID:1 by root@pam at 29 Nov 10:42:00"; got != want {
		t.Errorf("changed outside:\n got %q\nwant %q", got, want)
	}
	// On QEMU, where libvirt keeps no task: what was run, on which domain,
	// and when boxsnap first saw a revert, said as such.
	revert := providers.Task{Type: providers.TaskVirshRevert, Ref: providers.TaskRef{ID: "revert of boxsnap-bx1 0a1b"}, Guest: "boxsnap-bx1",
		Target: "sn1", Start: at, Status: "OK", FirstSeen: true}
	got = outsideWords(snapshots.EvRestoredOutside, revert, snapshots.NamedID("before", "sn1"), time.UTC)
	if want := "restored outside boxsnap: virsh revert to ‘before’ (sn1) on boxsnap-bx1, first seen at 29 Nov 10:42:00 (libvirt keeps no record of who did it or when)"; got != want {
		t.Errorf("restored outside on QEMU:\n got %q\nwant %q", got, want)
	}
	// The room sweep's delete, "by boxsnap: pve-1's storage was 93% full".
	if got, want := whyStorageFullWords("pve-1", 93.4), "pve-1's storage was 93% full"; got != want {
		t.Errorf("room sweep's why:\n got %q\nwant %q", got, want)
	}
}

// TestLogWordsShape: every box log event's words the sweeps write are a
// phrase after its kind: no space at either end, no verb of fmt left over,
// no doubled word, no full stop at the end (the line that says it adds
// one), and a snapshot it names in ‘’.
func TestLogWordsShape(t *testing.T) {
	t.Parallel()
	const sn, id = "before the migration", "sn1"
	at := time.Date(2026, 11, 29, 10, 42, 0, 0, time.UTC)
	task := providers.Task{Type: "qmrollback", Ref: providers.TaskRef{ID: "UPID:1"}, User: "root@pam", Start: at, Status: "OK"}
	// QEMU's: libvirt keeps no task, no user, and for a revert no time.
	revert := providers.Task{Type: providers.TaskVirshRevert, Ref: providers.TaskRef{ID: "revert of boxsnap-bx1 0a1b"}, Guest: "boxsnap-bx1",
		Target: id, Start: at, Status: "OK", FirstSeen: true}
	taken := providers.Task{Type: providers.TaskVirshSnapshot, Ref: providers.TaskRef{ID: "snapshot x"}, Guest: "boxsnap-bx1",
		Target: sn, Start: at, Status: "OK"}
	named := []string{
		logSnapshotWhyWords(sn, id, lostWords("pve-1", time.Hour)), logSnapshotWhyWords(sn, id, unavailableNoAnswerWords("pve-1", nil)),
		logFoundWords(sn, id, "pve-1", true, nil, time.UTC), logFoundWords(sn, id, "pve-1", false, &at, time.UTC),
		logFoundWords(sn, id, "pve-1", false, nil, time.UTC), logIncompleteToo(logFoundWords(sn, id, "pve-1", true, nil, time.UTC), "part is missing"),
		outsideWords(snapshots.EvRestoredOutside, revert, snapshots.NamedID(sn, id), time.UTC),
		outsideWords(snapshots.EvChangedOutside, taken, "", time.UTC),
	}
	others := []string{
		logSnapshotWhyWords("a", id, unavailableNotInSettingsWords("pve-2")), unavailableNoAnswerWords("pve-1", errors.New("timeout")),
		logThinnedWords(3, "its history is past 20 GiB"), logGuestGoneWords("vm-9", "pve-1"),
		outsideWords(snapshots.EvRestoredOutside, task, "", time.UTC), outsideWords(snapshots.EvRestoreOutsideFailed, task, "", time.UTC),
		outsideWords(snapshots.EvRestoreOutsideRun, task, "", time.UTC), outsideWords(snapshots.EvChangedOutside, task, "", time.UTC),
	}
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
