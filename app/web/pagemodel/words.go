package pagemodel

import (
	"fmt"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// The words only the pages' models say: the Now row, the timeline's lines,
// the take and unsave dialogs' counts and warnings, the box log's kinds of
// event, and the backends Settings lists as not run here. Words the core or another surface says
// too live in app/snapshots' words.go.

// Unavailable is a backend the specification names that boxsnap does not
// run, and why, as Settings lists it: never offered, never faked.
type Unavailable struct {
	Name, Why string
}

// NotRunBackends are the specification's backends that boxsnap does not
// run here.
var NotRunBackends = []Unavailable{
	{"microsandbox", "boxsnap has no microsandbox backend: no box here runs in a microsandbox sandbox."},
	{"Tart", "Tart runs macOS and Linux virtual machines on Apple silicon Macs; boxsnap has no Tart backend."},
	{"boat.dev", "A paid cloud service; boxsnap has no boat.dev backend and holds no boat.dev account."},
	{"Android devices", "An Android emulator's own device snapshots; boxsnap has no device backend."},
	{"The SSH host pool", snapshots.NoSnapshotsWords("the SSH host pool") + " boxsnap does not run it."},
	{"iOS", "iOS simulator slots have no snapshots; boxsnap does not run them."},
}

// TakeCountWords is the take dialog's count: what the per-box limit counts
// (Counts.ToLimit: undos and automatic snapshots apart, kept ones counted),
// and at the limit that the person's take is refused until one goes, as
// the limit makes room by itself only for an agent's take.
func TakeCountWords(box string, count, perBox int) string {
	if count < perBox {
		return fmt.Sprintf("%s has %d of %d.", box, count, perBox)
	}
	return fmt.Sprintf("%s has %d of %d: delete one before taking another.", box, count, perBox)
}

// UnsaveAsksWords is what the Unsave dialog says happens before it is
// done: the snapshot is at risk from then on.
func UnsaveAsksWords(name, box string) string {
	return fmt.Sprintf("‘%s’ goes back to %s's automatic history, where thinning may delete it as it ages.", name, box)
}

// NowNoHeadWords is the Now row of a box no snapshot holds yet.
func NowNoHeadWords(box string) string {
	return fmt.Sprintf("%s as it is now. No snapshot holds it yet.", box)
}

// NowHeadGoneWords is the Now row of a box whose head was deleted.
func NowHeadGoneWords(box string) string {
	return fmt.Sprintf("%s as it is now. The snapshot its files descend from was deleted.", box)
}

// NowWords is the Now row of a box with a head: "unchanged since ‘X’"
// when its backend says nothing changed since, "changed since ‘X’ (3
// files)" when something did, and "cannot tell on this backend" where the
// backend cannot answer. since names the head and when ("‘X’, yesterday
// 23:39", or "it was restored today at 11:02 to ‘X’"); restored says the
// box was restored to its head, and the answer counts from the restore.
func NowWords(box, since string, ch *providers.ChangeCheck, restored bool) string {
	if ch == nil {
		return fmt.Sprintf("%s as it is now, since %s: boxsnap cannot tell now whether it changed.", box, since)
	}
	changed := ch.Changed
	if ch.Restored && restored {
		switch {
		case !ch.RestoredKnown:
			changed = providers.ChangedUnknown
		case ch.Paths == 0:
			changed = providers.ChangedNo
		}
	} else if ch.Restored {
		changed = providers.ChangedUnknown
	}
	switch changed {
	case providers.ChangedNo:
		return fmt.Sprintf("%s as it is now: unchanged since %s.", box, since)
	case providers.ChangedYes:
		if ch.Paths > 0 {
			return fmt.Sprintf("%s as it is now: changed since %s (%s), in no snapshot yet.", box, since, Plural(ch.Paths, "file", "files"))
		}
		return fmt.Sprintf("%s as it is now: changed since %s, in no snapshot yet.", box, since)
	}
	return fmt.Sprintf("%s as it is now, since %s: whether it changed, boxsnap cannot tell on this backend.", box, since)
}

// RestoredToDeletedWords is a restore's notice when its target was
// deleted since: it names no snapshot that does not exist.
func RestoredToDeletedWords(at, by string) string {
	return fmt.Sprintf("Restored at %s to a snapshot deleted since, %s.", at, by)
}

// UndoDeletedWords ends a restore's notice whose undo was deleted since.
const UndoDeletedWords = "Its undo was deleted since, so it cannot be undone."

// RunState is how a box is for its automatic history: running, stopped,
// gone (released, in the trash, or its guest missing) or unknown (its
// backend did not answer).
type RunState int

// The run states.
const (
	RunUnknown RunState = iota
	RunRunning
	RunStopped
	RunGone
)

// TimelineWords is the timeline's first line: how many automatic
// snapshots the box holds, and what its automatic history does now, as the
// box is: "3 automatic snapshots · on: amber-fox runs, so boxsnap checks it
// every 15 s and takes one when it changed".
func TimelineWords(box string, n int, on bool, everySeconds int, run RunState) string {
	count := Plural(n, "automatic snapshot", "automatic snapshots")
	every := EveryWords(everySeconds)
	switch {
	case !on:
		return fmt.Sprintf("%s · automatic snapshots are off for %s", count, box)
	case run == RunRunning:
		return fmt.Sprintf("%s · on: %s runs, so boxsnap checks it every %s and takes one when it changed", count, box, every)
	case run == RunStopped:
		return fmt.Sprintf("%s · on, waiting: %s is stopped, and boxsnap takes one only while it runs (checked every %s)", count, box, every)
	case run == RunGone:
		return fmt.Sprintf("%s · none are taken now: %s does not run here", count, box)
	}
	return fmt.Sprintf("%s · on: checked every %s while %s runs, taken when it changed", count, every, box)
}

// TimelineNoneWords is an empty timeline's sentence, true to the box's
// state.
func TimelineNoneWords(box string, on bool, run RunState) string {
	switch {
	case !on:
		return fmt.Sprintf("No automatic snapshots of %s: they are off for it.", box)
	case run == RunStopped:
		return fmt.Sprintf("No automatic snapshots of %s yet: it is stopped, and boxsnap takes one while it runs, when it changed.", box)
	case run == RunGone:
		return fmt.Sprintf("No automatic snapshots of %s.", box)
	}
	return fmt.Sprintf("No automatic snapshots of %s yet: boxsnap takes one while it runs, when it changed.", box)
}

// PriceTag is a price among a row's or a list's words: PriceWords, "price
// unknown" for a price boxsnap does not know, and "" where there is none.
func PriceTag(p *providers.Price) string {
	if p != nil && !p.Known {
		return "price unknown"
	}
	return snapshots.PriceWords(p)
}

// CostsWords is a dialog's sentence of what something costs: "It costs
// $0.056 a day." ("It costs $0.056 a day until then." with until " until
// then"), "Its price is unknown.", or "No charge." where there is no price.
func CostsWords(p *providers.Price, until string) string {
	switch {
	case p == nil:
		return "No charge."
	case !p.Known:
		return "Its price is unknown."
	}
	return "It costs " + snapshots.PriceWords(p) + until + "."
}

// SizeWords say a snapshot's size on its row: "size unknown" when boxsnap
// cannot know it, "shares all its data with the box" rather than "0 KB"
// when deleting it would free nothing, else SizeOfWords.
func SizeWords(sn *snapshots.Snapshot) string {
	switch {
	case sn.SizeBytes == nil:
		return "size unknown"
	case *sn.SizeBytes == 0:
		return "shares all its data with the box"
	}
	return snapshots.SizeOfWords(sn.SizeBytes, sn.SizeMeaning)
}

// InTrashWords says why a box in the trash takes and restores no
// snapshot: the one home of these words for the pages.
func InTrashWords(box string) string {
	return fmt.Sprintf("%s is in the trash: restore it from the trash first.", box)
}

// ReleasedTakesNoneWords says why a released box takes no snapshot, on its
// page and its rows.
func ReleasedTakesNoneWords(box string) string {
	return fmt.Sprintf("%s is released: it takes no snapshots.", box)
}

// NoAutomaticWords says that a box has no automatic snapshots (its history
// has nothing to delete).
func NoAutomaticWords(box string) string { return fmt.Sprintf("%s has no automatic snapshots.", box) }

// StepWords says an operation's step while it runs, as the box's card
// shows it: "Stopping the box", "Taking the undo", "Restoring"; "Working"
// for a step with no words of its own.
func StepWords(step string) string {
	switch step {
	case string(providers.StepStop):
		return "Stopping the box"
	case string(providers.StepUndo):
		return "Taking the undo"
	case string(providers.StepRollback):
		return "Restoring"
	case string(providers.StepStart):
		return "Starting the box"
	case string(providers.StepReadSize):
		return "Reading its size back"
	case snapshots.StepUndos:
		return "Replacing older undos"
	case snapshots.StepWaiting, snapshots.StepQueued:
		return "Waiting for the box's earlier operation"
	case string(providers.StepAccess):
		return "Setting the box straight"
	case snapshots.StepCopyClone:
		return "Making a held copy"
	case snapshots.StepCopyDisarm, snapshots.StepCopyTemplate:
		return "Making the held copy inert"
	case string(providers.StepAdopt):
		return "Making the held copy its guest"
	case string(providers.StepEarlier):
		return "Keeping its old guest as its earlier guest"
	case snapshots.StepSnapshot:
		return "Taking a snapshot"
	case snapshots.StepDelete, snapshots.StepUnkeepDelete:
		return "Deleting a snapshot"
	}
	return "Working"
}

// RenewWords is the control that renews a kept snapshot, "Keep 30 more
// days" with the setting's days.
func RenewWords(days int) string { return fmt.Sprintf("Keep %d more days", days) }

// The box log's events as the pages say them: the kind of each (EventWords)
// before the words the core logged after it (snapshots.LogEvent's Words),
// on the box page's History card (EventParts) and in a settled card's live
// region (EventLine).

// EventWords says a box log event's kind as the pages say it: "Snapshot
// taken", "Stopped keeping"; a kind with no words of its own is its name,
// capitalized, with spaces for its dashes.
func EventWords(kind string) string {
	if w, ok := eventKindWords[kind]; ok {
		return w
	}
	w := strings.ReplaceAll(kind, "-", " ")
	if w == "" {
		return w
	}
	return strings.ToUpper(w[:1]) + w[1:]
}

// eventKindWords are the kinds of event with words of their own.
var eventKindWords = map[string]string{
	snapshots.EvSnapshotTaken: "Snapshot taken", snapshots.EvSnapshotFailed: "Snapshot failed",
	snapshots.EvRestoreAsked: "Restore asked", snapshots.EvRestored: "Restored", snapshots.EvRestoreFailed: "Restore failed",
	snapshots.EvRestoredOutside: "Restored outside boxsnap", snapshots.EvRestoreOutsideFailed: "A restore outside boxsnap failed",
	snapshots.EvRestoreOutsideRun: "A restore outside boxsnap is running", snapshots.EvChangedOutside: "Snapshots changed outside boxsnap",
	snapshots.EvForkAsked: "Fork asked", snapshots.EvForked: "Forked", snapshots.EvForkFailed: "Fork failed",
	snapshots.EvSnapshotDeleted: "Deleted", snapshots.EvSnapshotKept: "Kept", snapshots.EvSnapshotUnkept: "Stopped keeping",
	snapshots.EvSnapshotLost: "Lost", snapshots.EvSnapshotUnavailable: "Unavailable", snapshots.EvSnapshotFound: "Found again",
	snapshots.EvHeldCopyMade: "Held copy made", snapshots.EvHeldCopyStarted: "Held copy started",
	snapshots.EvMade: "Made", snapshots.EvReleased: "Released", snapshots.EvStarted: "Started",
	snapshots.EvReset: "Reset", snapshots.EvResetUndone: "Reset undone", snapshots.EvResetFailed: "Reset failed",
}

// EventLine says one event as one sentence, as a settled card's live
// region says the box log's newest: "amber-fox snapshot taken: ‘before the
// migration’ (sn_…), disk, in 1.2 s." Words that begin with the kind's own
// ("made on this host") say it once: "amber-fox made on this host."
func EventLine(box string, ev snapshots.LogEvent) string {
	what, words := EventParts(ev)
	line := box
	if what != "" {
		line += " " + strings.ToLower(what[:1]) + what[1:]
	}
	if words != "" {
		line += ": " + words
	}
	return strings.TrimSuffix(line, ".") + "."
}

// EventParts splits an event into what the History card says of its kind
// and the words after it; words that begin with the kind's own words
// ("made on this host") are said once, as "Made on this host", with no
// words after.
func EventParts(ev snapshots.LogEvent) (what, words string) {
	what, words = EventWords(ev.Kind), ev.Words
	if n := len(what); what != "" && len(words) > n && words[n] == ' ' && strings.EqualFold(words[:n], what) {
		return what + words[n:], ""
	}
	return what, words
}
