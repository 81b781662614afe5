package restore

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// refusal is a refusal of code in words written here.
func refusal(code snapshots.Code, words string) *snapshots.Refusal {
	return &snapshots.Refusal{Code: code, Words: words}
}

// ResetDoneWords says what a finished reset did: the one home of these
// words for the API, the CLI and the pages.
func ResetDoneWords(box string, res ResetResult) string {
	w := "Reset " + box + " to a fresh box"
	if res.Template != "" {
		w += " from " + res.Template
	}
	w += "."
	if len(res.Kept) > 0 {
		w += " Kept its logins: " + strings.Join(res.Kept, ", ") + "."
	}
	if len(res.Skipped) > 0 {
		w += " Skipped " + strings.Join(res.Skipped, "; ") + "."
	}
	if res.UndoName != "" {
		w += fmt.Sprintf(" Undo restores ‘%s’.", res.UndoName)
	}
	return w
}

// resetWords says what a reset did, for the box log.
func resetWords(res ResetResult) string {
	w := "reset to a fresh box"
	if res.Template != "" {
		w += " from " + res.Template
	}
	if len(res.Kept) > 0 {
		w += "; kept " + strings.Join(res.Kept, ", ")
	}
	if len(res.Skipped) > 0 {
		w += "; skipped " + strings.Join(res.Skipped, "; ")
	}
	if res.UndoName != "" {
		w += fmt.Sprintf("; Undo restores ‘%s’", res.UndoName)
	}
	return w
}

// DryRunWords says what a restore would do, for a dry run's answer: what
// the restore dialog says of its processes too, ended by a disk restore,
// brought back as they were by a memory restore, which ends those running
// now.
func DryRunWords(d *RestoreDry) string {
	w := fmt.Sprintf("A restore of %s to ‘%s’ would", d.Box.Name, d.Snapshot.Name)
	switch {
	case d.Undo && d.UndoOnceStopped:
		w += " stop it, take an undo of it stopped, then"
	case d.Undo:
		w += " first take an undo, then"
	}
	w += " put back everything on its disk as it was then"
	switch {
	case d.RestartsProcesses:
		w += "; every process in it ends"
	case d.Snapshot.Holds == string(providers.HoldsDiskAndMemory):
		w += ", and its memory: it comes back running as it was then, with the credentials its apps held then. Every process running in it now ends"
	}
	w += "."
	if d.Changes != nil {
		w += " " + d.Changes.Words + "."
	}
	return w + " " + snapshots.NothingChangedDryWords
}

// What a restore that found its target's record gone says.
const (
	failTargetGone = "its target's record is gone; nothing changed"
)

// What boxsnap observed of a box after its restore or reset failed.
const (
	observedNothingChanged = "nothing changed"
	observedResetStopped   = "the box is reset and stopped"
	observedMayBeFresh     = "the box may be fresh"
	observedFreshNoLogins  = "the box may be fresh, without its logins"
	observedAsBeforeReset  = "the box is as it was before the reset"
)

// What a restore that failed left of the box (observedRestoreWords): its
// files, then whether it runs: a failed restore leaves the box as it found
// it, or says exactly how it left it.
const (
	observedFilesAsTheyWere = "the files are as they were"
	observedFilesPutBack    = "the files were put back as they were"
	observedFilesRestored   = "the files are the snapshot's"
	// After a failed step 9: the box's access was not written again.
	observedFilesRestoredAccess = "the files, and perhaps the box's access, are the snapshot's"
	observedBoxStartedAgain     = "the box was started again"
	observedBoxRuns             = "the box is running"
	observedBoxStoppedAsBefore  = "the box is stopped, as it was before the restore"
	observedNoUndo              = "no undo was taken"
	observedUndoNotReady        = "the undo is not ready"
)

// onlyPersonRestoresMemoryWords: Settings' "Agents may restore memory
// snapshots" is off: a memory restore brings back running processes with
// the credentials they held then.
const onlyPersonRestoresMemoryWords = "Only the person restores a memory snapshot in this install."

// logRestoreAskedWords: restore-asked, "the snapshot, the undo's name or
// ‘no undo’", and the yes it ran on (consentWords, after a comma). undo is
// "" where the undo is not this step's to name.
func logRestoreAskedWords(name, undo string, noUndo bool, yes string) string {
	switch {
	case noUndo:
		return fmt.Sprintf("to ‘%s’, no undo%s", name, yes)
	case undo != "":
		return fmt.Sprintf("to ‘%s’; undo ‘%s’%s", name, undo, yes)
	}
	return fmt.Sprintf("to ‘%s’%s", name, yes)
}

// logRestoredWords: restored, "the snapshot, the time it went back to,
// size changes".
func logRestoredWords(name string, taken time.Time, yes string, size *providers.BoxSize, tz *time.Location) string {
	w := fmt.Sprintf("to ‘%s’, taken %s%s", name, taken.In(tz).Format("2 Jan 15:04"), yes)
	if size != nil && size.MemoryBytes > 0 {
		w += fmt.Sprintf("; %d cores and %s memory, as it was then", size.Cores, snapshots.GiB(size.MemoryBytes))
	}
	return w
}

// logEarlierGuestWords: held-copy-made for a swap's old guest, kept as
// the box's earlier guest.
func logEarlierGuestWords(old, box string, snapshots int64, fresh string) string {
	return fmt.Sprintf("guest %s is %s's earlier guest now, disarmed, with %d snapshots: fork only; its new guest is %s, with its MAC addresses", old, box, snapshots, fresh)
}

// logThenWords: an operation's failure and what boxsnap then observed, as
// a reset that did not finish logs it.
func logThenWords(words, observed string) string { return words + "; then: " + observed }

// logSetStraightWords: set-straight, what a restore's last step (after:
// "the restore", "the reset") brought back; locked is the host's lock
// (LockedWords), or "".
func logSetStraightWords(after string, did []string, locked string) string {
	if locked != "" {
		if len(did) == 0 {
			return locked
		}
		return "set straight after " + after + ": " + strings.Join(did, " and ") + ". " + locked
	}
	if len(did) == 0 {
		return "set straight after " + after + ": nothing had changed"
	}
	return "set straight after " + after + ": " + strings.Join(did, " and ") + " brought back to what the box holds now"
}

// consentWords say the yes a restore ran on, "on a yes given by the person
// at 11:02", or "" for a restore without one.
func consentWords(op *snapshots.Operation, tz *time.Location) string {
	if len(op.Consent) == 0 || string(op.Consent) == "null" {
		return ""
	}
	var c snapshots.Consent
	if err := json.Unmarshal(op.Consent, &c); err != nil || c.By == "" {
		return ""
	}
	return fmt.Sprintf("on a yes given by %s at %s", c.By, c.At.In(tz).Format("15:04"))
}

// observedFilesPartWayWords: a rollback that failed part way, whose files
// the undo could not put back (why).
func observedFilesPartWayWords(why string) string {
	return "the files may be part way to the snapshot's: putting them back from the undo failed: " + why
}

// observedStartFailedWords: a box a failed restore left stopped, as
// starting it failed (why).
func observedStartFailedWords(why string) string {
	return "the box is stopped: starting it failed: " + why
}

// observedRestoreWords: what a failed restore left, its files and then its
// box, joined by "and", or by a semicolon where either gives its reason.
func observedRestoreWords(files, box string) string {
	if box == "" {
		return files
	}
	if strings.Contains(files, ":") || strings.Contains(box, ":") {
		return files + "; " + box
	}
	return files + " and " + box
}

// failNothingChangedWords: a refusal met when the operation ran, before it
// changed anything.
func failNothingChangedWords(why string) string { return why + " Nothing changed." }

// observedNoAnswerWords: a host that stopped answering in the middle of a
// step, so boxsnap cannot say how it ended.
func observedNoAnswerWords(host, step string) string {
	return fmt.Sprintf("%s did not answer while boxsnap was at %s", host, step)
}

// failUndoWords: a restore whose undo could not be taken; notStarted is
// why boxsnap could not start the box again, or "".
func failUndoWords(why, notStarted string) string {
	w := "could not take the undo: " + why
	if notStarted != "" {
		w += "; and boxsnap could not start it again: " + notStarted
	}
	return w
}

// The words of a reset that did not finish (its why, after "boxsnap").
func resetWhyUndo(err error) string { return "could not take the undo: " + err.Error() }

func resetWhyStop(err error) string { return "could not stop it: " + err.Error() }

func resetWhyFresh(err error) string { return "could not make it fresh: " + err.Error() }

func resetWhyAccess(err error) string {
	return "could not write its access back: " + err.Error()
}

func resetWhyStart(err error) string {
	return "could not start it once it was fresh: " + err.Error()
}

func resetWhyNoUndo(why string) string { return why + "; and its undo's record is gone" }

// resetUnfinishedWords: a reset that stopped and did not undo itself.
func resetUnfinishedWords(why string) string { return "Reset did not finish: boxsnap " + why }

// resetNotBackWords: a reset that could not undo itself either.
func resetNotBackWords(why, box string, err error, undo string) string {
	return fmt.Sprintf("Reset did not finish: boxsnap %s; and it could not put %s back: %v. Restore ‘%s’ to go back.", why, box, err, undo)
}

// resetUndoneWords: a reset that undid itself.
func resetUndoneWords(why, box, undo string) string {
	return fmt.Sprintf("The reset undid itself: boxsnap %s. %s is as it was before, from ‘%s’.", why, box, undo)
}

// agentsDoNotResetWords: Settings' "Agents may restore their own boxes" is
// off, and a reset is a restore to a fresh box.
func agentsDoNotResetWords(box string) string {
	return fmt.Sprintf("Agents do not reset boxes by themselves in this install: ask the person to reset %s.", box)
}

func beingReleasedWords(box string) string { return fmt.Sprintf("%s is being released.", box) }

// boxIsWords: the box is in a state (stopping, released) that does not
// allow the change now.
func boxIsWords(box string, state snapshots.BoxState) string {
	return fmt.Sprintf("%s is %s.", box, state)
}

func otherBoxForkInsteadWords(name, box string) string {
	return fmt.Sprintf("‘%s’ is a snapshot of %s: fork it instead.", name, box)
}

// guardNowWords: the guard (work, terminals, the desktop) refuses an agent
// while it lasts, as only the person may end that work; verb is
// "restored" or "reset".
func guardNowWords(box, verb, guard string) string {
	return fmt.Sprintf("%s cannot be %s now. %s", box, verb, guard)
}

// restoreGuardWords: the guard asks the person to restore anyway, as the
// restore dialog's button does.
func restoreGuardWords(box, guard string) string {
	return fmt.Sprintf("Restoring %s also ends this. %s Restore anyway to go on.", box, guard)
}

func resetGuardWords(box, guard string) string {
	return fmt.Sprintf("Resetting %s also ends this. %s Reset anyway to go on.", box, guard)
}

// notResetWithoutUndoWords: a reset always takes its undo.
func notResetWithoutUndoWords(why string) string { return why + " It is not reset without an undo." }

// noRoomForUndoWords: the undo's room, reserved before the box stops,
// refused.
func noRoomForUndoWords(room string) string { return "No room for the undo. " + room }

// orUntickUndoWords: the person can untick the undo instead.
func orUntickUndoWords(refused string) string {
	return refused + " Or untick the undo to restore without one."
}

func cannotReadLoginsWords(backend, box string) string {
	return fmt.Sprintf("%s cannot read the logins back from %s's undo: reset it without Keep logins.", backend, box)
}

func notFromTemplateWords(box string) string {
	return fmt.Sprintf("%s was not made from a template here (it was adopted, forked or imported): name a box template to reset it to.", box)
}

func templateElsewhereWords(template, templateBackend, box, boxBackend string) string {
	return fmt.Sprintf("The box template %s makes boxes on %s; %s is on %s.", template, templateBackend, box, boxBackend)
}

// resetFromSourceWords names what a box made from no box template is reset
// to: its template folder, or on Docker the image it was made from.
func resetFromSourceWords(backendKind, source string) string {
	if backendKind == "docker" {
		return "the image " + source + ", as it was made"
	}
	return "the template folder " + source + ", as it was made"
}

// logRestoredHowWords: what the restored event says the backend did with
// the box: brought it back from the snapshot's memory, ended its processes,
// and whether it runs now (state, BoxRunning or BoxStopped).
func logRestoredHowWords(resumed, ended bool, state string) string {
	switch {
	case resumed:
		return "; it runs on from then, its processes with it"
	case ended:
		return "; every process in it ended; it is " + state
	}
	return "; it is " + state
}

// ResetNotBuiltWords is the one home of why a box on a backend with no
// Resetter is not reset.
func ResetNotBuiltWords(be snapshots.Backend, b *snapshots.Box) string {
	return fmt.Sprintf("Reset is built for boxes on this host's folders only: boxsnap does not reset %s on %s. Release it and make a new box from its template instead.", b.Name, be.Label)
}

// LogHeldUndoTakenWords: snapshot-taken for a ZFS restore's undo, a held
// copy of the stopped guest.
func LogHeldUndoTakenWords(name, id, ref, host string) string {
	return fmt.Sprintf("%s, the undo of this restore: held copy %s of the stopped guest on %s; Undo swaps it in", snapshots.NamedID(name, id), ref, host)
}

// noUndoNotRestoredWords: a restore takes an undo first, so with none it
// is not restored.
func noUndoNotRestoredWords(box, backend string) string {
	return strings.TrimSuffix(snapshots.NoUndoCanBeTakenWords(box, backend), ".") + ", so it is not restored."
}

// A box threads run on: its restores are off until Settings turns them on,
// as a turn could still start on it during a restore.

const executionOff = "Restores of boxes threads run on are off"

// ExecutionRestoresOffWords says why a box threads run on is not restored
// while Settings keeps "Restores of boxes threads run on" off.
const ExecutionRestoresOffWords = executionOff + ": move its threads off it first."

// executionMachineRefusalWords refuses such a restore, naming the threads
// that run on the box.
func executionMachineRefusalWords(threads []string, box string) string {
	verb := "runs"
	if len(threads) > 1 {
		verb = "run"
	}
	return fmt.Sprintf(executionOff+": %s %s on %s. Move its threads off it first.", strings.Join(threads, " and "), verb, box)
}
