package boxes

import (
	"fmt"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// The words the boxes alone say, each written once: a release's and a
// restore from the trash's failures and what boxsnap then observed, the
// box log's words of a stopped release, and the refusals of the boxes,
// threads, templates, the trash and forgetting a backend. Words the kernel
// or another seam also says stay in package snapshots' words.go.

func releaseCouldNotStopWords(box string, err error) string {
	return fmt.Sprintf(ReleaseUnfinished+"boxsnap could not stop %s: %v", box, err)
}

// Starting a stopped box, from its card.
const onlyPersonStartsWords = "Only the person starts a box from its card."

func startReleasedWords(box string) string {
	return fmt.Sprintf("%s is released: there is nothing to start.", box)
}

func startBusyWords(box string) string {
	return fmt.Sprintf("%s is busy with an operation: start it once that ends.", box)
}

func nothingToRunWords(box string) string {
	return fmt.Sprintf("%s has nothing to run: its backend started no process, so it stays stopped.", box)
}

func runningAlreadyWords(box string) string { return fmt.Sprintf("%s is running already.", box) }

// isCopyFailed tells a release stopped by a held copy that could not be
// made, by its words.
func isCopyFailed(words string) bool {
	return strings.HasPrefix(words, ReleaseUnfinished+CopyFailed)
}

func releaseUnfinishedWords(why string) string { return ReleaseUnfinished + why }

func releaseCouldNotDeleteWords(name, why string) string {
	return fmt.Sprintf(ReleaseUnfinished+"boxsnap could not delete ‘%s’: %s", name, why)
}

// logReleaseStoppedWords: release-stopped, a release's failure and that
// nothing kept was deleted.
func logReleaseStoppedWords(why string) string {
	return strings.TrimSuffix(why, ".") + ". " + strings.ToUpper(observedNothingKeptGone[:1]) + observedNothingKeptGone[1:] + "."
}

const observedNothingKeptGone = "nothing kept was deleted"

const observedReadyNotInTrash = "the box is ready again, not in the trash"

const observedStillInTrash = "the box is still in the trash"

// A held copy that cannot be made (inside CopyFailedWords).
func copyIsWords(state string) string { return "it is " + state }

func copyNoStorageWords(why string) string { return "boxsnap could not read its storage: " + why }

func copyRoomWords(host string, room, need int64) string {
	return fmt.Sprintf("%s has %s free, and it needs %s", host, snapshots.GB(room), snapshots.GB(need))
}

// Why a release left no final snapshot in the trash (logTrashedWords'
// noFinal, and the trash's list).
func finalNoneWords(backend, box string) string {
	return fmt.Sprintf("%s takes no snapshots of %s.", backend, box)
}

func finalNoPlanWords(err error) string { return "boxsnap could not plan it: " + err.Error() }

func finalFailedWords(err error) string { return "it failed: " + err.Error() }

// The words of a restore from the trash that did not finish.
func untrashGoneWords(box string) string { return box + "'s record in the trash is gone" }

func untrashGuestWords(box string, err error) string {
	return fmt.Sprintf("boxsnap could not bring %s's guest back: %v", box, err)
}

func untrashStartWords(box string, err error) string {
	return fmt.Sprintf("boxsnap could not start %s: %v", box, err)
}

func untrashUnfinishedWords(why string) string {
	return "Restore from the trash did not finish: " + why + ". It is still in the trash."
}

const onlyPersonMakesThreadWords = "Only the person makes threads."

const onlyPersonDeletesKeptWords = "Only the person deletes what they kept."

const onlyPersonSeesBoxesWords = "Only the person sees every box."

const onlyPersonEmptiesTrashWords = "Only the person empties the trash."

const onlyPersonHistoryWords = "Only the person changes a box's history settings."

const onlyPersonTemplatesWords = "Only the person changes box templates."

const onlyPersonForgetsWords = "Only the person forgets snapshots."

const onlyPlatformPresenceWords = "Only the platform, with the owner's token, reports presence."

const noTemplateWords = "No box template by that name: the owner makes box templates on the Settings page."

func noRecordsWords(backend string) string {
	return fmt.Sprintf("boxsnap records no snapshots of %s.", backend)
}

func threadTitleWords(most int) string {
	return fmt.Sprintf("A thread's title is 1 to %d characters.", most)
}

func boxIsAlreadyWords(box string, state snapshots.BoxState) string {
	return fmt.Sprintf("%s is %s already.", box, state)
}

func holdsGuestWords(box string) string {
	return fmt.Sprintf("%s already holds that guest: release it first.", box)
}

func templateSetsWords(template, field string) string {
	return fmt.Sprintf("The box template %s sets the %s: leave it out.", template, field)
}

func presenceThreadWords(thread string) string {
	return fmt.Sprintf("Presence names a thread %s that boxsnap does not know.", thread)
}

const terminalsBelowZeroWords = "Terminals cannot be below zero."

func inTrashAlreadyWords(box string) string {
	return fmt.Sprintf("%s is in the trash already: restore it from the trash, or the person empties it.", box)
}

func notInTrashWords(box string) string { return fmt.Sprintf("%s is not in the trash.", box) }

// forgetInSettingsWords: Forget is for a backend removed from settings.
func forgetInSettingsWords(backend string) string {
	return fmt.Sprintf("%s is in settings: delete its snapshots instead. Forget is for a backend removed from settings.", backend)
}

const templateKindWords = "A box template names the kind of box it makes, such as linux or lxc."

const templateUserWords = "A box template's user is the name of an unprivileged user of this host, never root."

const envNameWords = "An environment variable's name is letters, digits and underscores, not starting with a digit."

const templateLimitsWords = "A box template's limits cannot be below zero."

func chooseBackendWords(backends []string) string {
	return fmt.Sprintf("Choose one of the backends: %s.", strings.Join(backends, ", "))
}

func templateSourceWords(most int) string {
	return fmt.Sprintf("A box template's source is at most %d characters.", most)
}

func templateCommandWords(most int) string {
	return fmt.Sprintf("A box template's command is at most %d bytes.", most)
}

func templateEnvWords(most int) string {
	return fmt.Sprintf("A box template declares at most %d environment variables.", most)
}

// logMadeOnWords: made, for a box made on a backend.
func LogMadeOnWords(backend string) string { return "made on " + backend }

// logDeletedWithEarlierWords: snapshot-deleted for a snapshot on an
// earlier guest that went with its box's release.
func LogDeletedWithEarlierWords(name, id, box string) string {
	return fmt.Sprintf("%s, with %s's earlier guest", snapshots.NamedID(name, id), box)
}

// logHeldCopyMadeWords: held-copy-made, "the copy".
func LogHeldCopyMadeWords(name, ref, host string, memory bool) string {
	where := ""
	if host != "" {
		where = " on " + host
	}
	w := fmt.Sprintf("‘%s’ copied to held copy %s%s, a copy that cannot start", name, ref, where)
	if memory {
		w += "; the copy holds the disk only"
	}
	return w
}

// logHeldCopyRemadeWords: held-copy-started, "what boxsnap then did".
func LogHeldCopyRemadeWords(name string) string {
	return fmt.Sprintf("‘%s’: its copy was cut short before it was a template, so boxsnap deleted it and copied again", name)
}

// logReleasedWords: released.
const LogReleasedWords = "released; kept snapshots stay"

// logHistorySettingsWords: history-settings; automatic nil follows the
// backend's setting.
func LogHistorySettingsWords(automatic *bool) string {
	switch {
	case automatic == nil:
		return "automatic snapshots follow the backend's setting"
	case *automatic:
		return "automatic snapshots on"
	}
	return "automatic snapshots off"
}

// logTrashedWords: trashed; final is its final snapshot's name, or "" with
// why there is none (noFinal), or neither.
func LogTrashedWords(until time.Time, final, noFinal string, tz *time.Location) string {
	w := "moved to the trash until " + until.In(tz).Format("2 Jan 15:04")
	switch {
	case final != "":
		w += fmt.Sprintf(", with its final snapshot ‘%s’", final)
	case noFinal != "":
		w += "; no final snapshot: " + noFinal
	}
	return w
}

// logUntrashedWords: restored-from-trash.
func LogUntrashedWords(started bool) string {
	if started {
		return "restored from the trash with its history, and started"
	}
	return "restored from the trash with its history"
}

// logForgottenWords: snapshot-forgotten.
func LogForgottenWords(name, id, backend string) string {
	return fmt.Sprintf("%s: its record only; its backend %s is not in settings, so it may still exist there and be billed", snapshots.NamedID(name, id), backend)
}

// agentNamesTemplateWords: an agent makes a box only from a box template,
// and names one.
const agentNamesTemplateWords = "An agent makes a box only from a box template, by name: name one in template."

// ForgotWords says what ForgetBackend did.
func ForgotWords(p *ForgetPlan, kept []string) string {
	n := len(p.Snapshots) - len(kept)
	w := fmt.Sprintf("Forgot %s of %s: their records only. They may still exist on %s and be billed.", snapshots.Plural(n, "snapshot", "snapshots"), p.Backend, p.Backend)
	if len(kept) > 0 {
		w += fmt.Sprintf(" %s stay, in use by an operation: forget again when it ends.", strings.Join(kept, ", "))
	}
	return w
}

// CopyFailedWords is the refusal when a release's held copy cannot be made,
// so the release stops before the guest goes: "Release did not finish:
// boxsnap could not copy ‘Thu 09:15’ (pve-1 has 6 GB free, and it needs 13
// GB)".
func CopyFailedWords(snapshot, why string) string {
	return fmt.Sprintf(ReleaseUnfinished+CopyFailed+"‘%s’ (%s)", snapshot, why)
}

// The words of a release that stopped because a kept snapshot could not be
// made to outlast it: the operation's error, on the box's page.
const (
	ReleaseUnfinished = "Release did not finish: "
	CopyFailed        = "boxsnap could not copy "
)
