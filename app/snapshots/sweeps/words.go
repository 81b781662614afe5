package sweeps

import (
	"fmt"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// The words the sweeps alone say: the box log's words of the reconcile
// (a snapshot lost, unavailable or found again, a guest gone), of the scan
// for restores made outside boxsnap and of thinning, and who did it and why
// (by boxsnap: the box changed, its keep ended, a storage full). Words the
// kernel or another seam says too are in app/snapshots/words.go.

// outsideWords says, for the box log, what a backend's task did to a box
// outside boxsnap, which the scan of the task lists found. target names
// the snapshot the task went to or took as boxsnap knows it ("" where
// boxsnap has no record of it: the backend's name is said).
func outsideWords(kind string, t providers.Task, target string, tz *time.Location) string {
	at := t.Start.In(tz).Format("2 Jan 15:04:05")
	if t.FirstSeen || t.Target != "" {
		if target == "" && t.Target != "" {
			target = "‘" + t.Target + "’"
		}
		return outsideUnrecordedWords(kind, t, target, at)
	}
	switch kind {
	case snapshots.EvRestoredOutside:
		return fmt.Sprintf("restored outside boxsnap: %s task %s by %s at %s ended %s", t.Type, t.Ref.ID, t.User, at, t.Status)
	case snapshots.EvRestoreOutsideFailed:
		return fmt.Sprintf("a restore outside boxsnap failed: %s task %s by %s at %s ended %s", t.Type, t.Ref.ID, t.User, at, t.Status)
	case snapshots.EvRestoreOutsideRun:
		return fmt.Sprintf("a restore outside boxsnap is running: %s task %s by %s since %s", t.Type, t.Ref.ID, t.User, at)
	}
	return fmt.Sprintf("its snapshots changed outside boxsnap: %s task %s by %s at %s", t.Type, t.Ref.ID, t.User, at)
}

// outsideUnrecordedWords says what a backend that keeps no task history
// (QEMU's libvirt) found changed outside boxsnap: what was done, to which
// snapshot, and when it was done or, where libvirt does not say, when
// boxsnap first saw it.
func outsideUnrecordedWords(kind string, t providers.Task, target, at string) string {
	what := t.Type
	switch {
	case target == "":
	case kind == snapshots.EvChangedOutside:
		what += " " + target
	default:
		what += " to " + target
	}
	when := "at " + at
	if t.FirstSeen {
		when = "first seen at " + at + " (libvirt keeps no record of who did it or when)"
	}
	if kind == snapshots.EvRestoredOutside {
		return fmt.Sprintf("restored outside boxsnap: %s on %s, %s", what, t.Guest, when)
	}
	return fmt.Sprintf("its snapshots changed outside boxsnap: %s on %s, %s", what, t.Guest, when)
}

// logSnapshotWhyWords: snapshot-lost and snapshot-unavailable, "its name,
// the backend's words".
func logSnapshotWhyWords(name, id, why string) string {
	return snapshots.NamedID(name, id) + ": " + why
}

// Why a snapshot is unavailable or lost (its record's words, and its
// event's).
func unavailableNotInSettingsWords(backend string) string {
	return fmt.Sprintf("its backend %s is not in settings", backend)
}

func unavailableNoAnswerWords(host string, err error) string {
	if err == nil {
		return host + " does not answer"
	}
	return fmt.Sprintf("%s does not answer: %v", host, err)
}

func lostWords(host string, apart time.Duration) string {
	return fmt.Sprintf("not on %s at two listings %s apart", host, snapshots.DurationWords(apart))
}

// logFoundWords: snapshot-found, a snapshot on a host with no record:
// found where its record had been lost (found), recorded again as kept
// where its keep outlived its box (keptUntil), or recorded again.
func logFoundWords(name, id, host string, found bool, keptUntil *time.Time, tz *time.Location) string {
	switch {
	case found:
		return fmt.Sprintf("%s: Found on %s, not in boxsnap's records", snapshots.NamedID(name, id), host)
	case keptUntil != nil:
		return fmt.Sprintf("%s is on %s with no record in boxsnap: recorded again as kept until %s", snapshots.NamedID(name, id), host, keptUntil.In(tz).Format("2 Jan 2006"))
	}
	return fmt.Sprintf("%s is on %s with no record in boxsnap: recorded again, by unknown", snapshots.NamedID(name, id), host)
}

// logIncompleteToo adds that a snapshot found is incomplete.
func logIncompleteToo(words, why string) string { return words + "; it is incomplete: " + why }

// logThinnedWords: history-thinned and history-deleted.
func logThinnedWords(n int, why string) string {
	return fmt.Sprintf("%d automatic snapshots deleted, %s", n, why)
}

// logGuestGoneWords: guest-gone, the reconcile's word that a ready box's
// guest is gone.
func logGuestGoneWords(guest, host string) string {
	return fmt.Sprintf("its guest %s is gone from %s: removed outside boxsnap; its snapshots stay", guest, host)
}

// Who did what the sweeps log, and why, as the box log says after "by
// boxsnap": the reconcile, the scan of the task lists, thinning.
const (
	byReconcile = "reconcile"
	byTaskList  = "from the provider's task list"
	byThinning  = "thinning"
)

// Why the automatic check takes a snapshot of a box.
const (
	whyBoxStopped = "the box stopped"
	whyBoxChanged = "the box changed"
	whyCannotTell = "its backend cannot tell whether it changed"
)

// Why a sweep deletes or releases: a keep's expiry, the trash's emptying,
// thinning.
const (
	whyKeepEnded  = "its keep ended"
	whyTrashEnded = "its time in the trash ended"
	whyThinned    = "thinned by automatic history"
)

// setStraightAfterOutside says what a box is set straight after, when the
// restore was made outside boxsnap.
const setStraightAfterOutside = "the restore made outside boxsnap"

// whyStorageFullWords and whyMetadataFullWords say why the room sweep
// deletes: "pve-1's storage was 93% full".
func whyStorageFullWords(host string, full float64) string {
	return fmt.Sprintf("%s's storage was %.0f%% full", host, full)
}

func whyMetadataFullWords(host string, full float64) string {
	return fmt.Sprintf("%s's thin pool metadata was %.0f%% full", host, full)
}

// whyDeletingHistoryWords says why a Delete history deletes: who asked
// ("by you"), deleting the box's history.
func whyDeletingHistoryWords(c snapshots.Caller) string {
	return snapshots.ByWhy(c) + ", deleting the box's history"
}
