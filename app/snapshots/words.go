package snapshots

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// The words a person or an agent reads, written once so that a thing reads
// the same wherever it is said: what a snapshot holds, prices in their
// currency, sizes, how long, an operation's step, and what boxsnap could not
// confirm; then the words of states, pins and changes, who did something
// and what was done; then every refusal, grouped by the rule that refuses.
// The rules, the pages, the API and its tools, and the CLI say these
// through here; words_test.go holds the specification's sentences to its
// text and the rest to the shape of a sentence.

// HoldsWords is what a snapshot holds: "disk", "disk and memory", or
// "device" for a device's snapshot, which holds an emulator's device and
// nothing else of the box.
func HoldsWords(holds, scope string) string {
	switch {
	case scope == string(providers.ScopeDevice) || holds == string(providers.ScopeDevice):
		return "device"
	case holds == string(providers.HoldsDiskAndMemory):
		return "disk and memory"
	}
	return "disk"
}

// currencySign is how an amount of currency is written in front of it: "$",
// "€", "£", or the currency's code and a space ("CHF ") for any other.
func currencySign(currency string) string {
	switch currency {
	case "", "USD":
		return "$"
	case "EUR":
		return "€"
	case "GBP":
		return "£"
	}
	return currency + " "
}

// Money says an amount in its currency, always to the cent, as the paid
// ceiling's refusal does ("about $5.04 a month, past your ceiling of
// $5.00"): "€1.20", "£0.30", "CHF 2.00".
func Money(amount float64, currency string) string {
	return currencySign(currency) + strconv.FormatFloat(amount, 'f', 2, 64)
}

// PriceWords says a price as the provider gives it ("$0.056 a day"): its
// currency's sign, the amount to the provider's last digit and at least to
// the cent, and its period ("a day", "a month", "per GB a month"). A price
// boxsnap does not know is "unknown", never free; no price at all (nil: the
// person's own storage) is "".
func PriceWords(p *providers.Price) string {
	if p == nil {
		return ""
	}
	if !p.Known {
		return "unknown"
	}
	amount := strconv.FormatFloat(p.Amount, 'f', -1, 64)
	if i := strings.IndexByte(amount, '.'); i < 0 {
		amount += ".00"
	} else if len(amount)-i == 2 {
		amount += "0"
	}
	per := "a " + p.Per
	if p.Per == "GB-month" {
		per = "per GB a month"
	}
	return currencySign(p.Currency) + amount + " " + per
}

// PriceOf reads a price recorded as JSON (a snapshot's record); nil where
// there is none. One that cannot be read is unknown, never free.
func PriceOf(raw json.RawMessage) *providers.Price {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var p providers.Price
	if json.Unmarshal(raw, &p) != nil {
		return &providers.Price{}
	}
	return &p
}

// GB says a snapshot's size in GB, as providers bill; its one home is
// providers.GB, so a backend's words say sizes as these do.
func GB(n int64) string { return providers.GB(n) }

// GiB says a box's memory or disk in GiB, as a box's size is set and shown;
// a snapshot's size is in GB (GB), as providers bill it.
func GiB(n int64) string {
	g := float64(n) / (1 << 30)
	if g == float64(int64(g)) {
		return fmt.Sprintf("%d GiB", int64(g))
	}
	return fmt.Sprintf("%.1f GiB", g)
}

// BinarySize says a bound or what a box holds against it in binary units,
// as a template sets them: "32 MiB", "16 GiB", "39.5 MiB", "512 bytes".
func BinarySize(n int64) string {
	switch {
	case n >= 1<<30:
		return GiB(n)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// DiskStopWords say that a box reached its disk bound, on its page, in the
// API's box, the CLI and the agent's tools: that its writes past the bound
// fail while it runs on (its own file system bounds it), that it holds as
// many files as its file system can, or that its disk cannot grow because
// the host's is full; or that its backend stopped it by itself (a watch
// bounds it); "" for a box not at its bound.
func DiskStopWords(box string, d *providers.DiskStop) string {
	if d == nil {
		return ""
	}
	switch {
	case d.Full && d.Files > 0:
		return fmt.Sprintf("Box %s reached its limit of %d files (its disk bound of %s sets it; its files hold %s): it runs on, but a new file, folder or link in it fails, and its files are as they were written. Delete some of them to make room, or raise the disk bound in its template and reset the box.",
			box, d.Files, BinarySize(d.BoundBytes), BinarySize(d.UsedBytes))
	case d.Full && d.HostFull:
		return fmt.Sprintf("Box %s cannot grow toward its disk bound of %s (its files hold %s) because the host's disk is full: it runs on, but its writes fail until room is made on the host, and its files are as they were written.",
			box, BinarySize(d.BoundBytes), BinarySize(d.UsedBytes))
	case d.Full:
		return fmt.Sprintf("Box %s reached its disk bound of %s (its files hold %s): it runs on, but its writes past the bound fail, and its files are as they were written. Delete some of them to make room, or raise the disk bound in its template and reset the box.",
			box, BinarySize(d.BoundBytes), BinarySize(d.UsedBytes))
	}
	return fmt.Sprintf("Box %s reached its disk bound of %s (its files hold %s): boxsnap stopped it, and its files are as it left them. Delete some of them, or raise the disk bound in its template, then start it again.",
		box, BinarySize(d.BoundBytes), BinarySize(d.UsedBytes))
}

// FileSizeWords says the size of a file, in a snapshot or written from one
// (an export), as GB says every size: "1 byte", "512 bytes", "2 KB".
func FileSizeWords(n int64) string { return GB(n) }

// SizeOfWords says a snapshot's size and what it means: "1.2 GB", "1.2 GB,
// some shared with the box" for a whole size, or "unknown".
func SizeOfWords(bytes *int64, meaning *string) string {
	if bytes == nil {
		return "unknown"
	}
	w := GB(*bytes)
	if meaning != nil && *meaning == "whole" {
		w += ", some shared with the box"
	}
	return w
}

// DurationWords says how long something took: "850 ms", "1.2 s", "2m5s".
func DurationWords(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// doingWords says what an operation was doing at a step, in the middle of
// a sentence: "rolling back", "taking the undo".
func doingWords(step string) string {
	switch step {
	case string(providers.StepRollback):
		return "rolling back"
	case string(providers.StepStop):
		return "stopping it"
	case string(providers.StepStart):
		return "starting it"
	case string(providers.StepUndo):
		return "taking the undo"
	case StepSnapshot:
		return "taking the snapshot"
	case StepDelete:
		return "deleting the snapshot"
	}
	return "working on it"
}

// UnknownWords says what boxsnap could not confirm after a restart ("boxsnap
// could not confirm the restore of amber-fox: it was rolling back when
// boxsnap restarted"), with what it observed since, if anything.
func UnknownWords(box string, op *Operation) string {
	w := fmt.Sprintf("boxsnap could not confirm the %s of %s: it was %s when boxsnap restarted", op.Kind, box, doingWords(op.Step))
	if op.Observed != nil && *op.Observed != "" {
		w += " (" + *op.Observed + ")"
	}
	return w + "."
}

// AlwaysWithUndoWords says that a box threads run on is restored only with
// an undo: the refusal of a restore without one, and the restore dialog's
// undo line, which is ticked and locked there.
func AlwaysWithUndoWords(box string) string {
	return box + " is a box threads run on: it is never restored without an undo."
}

// The words a snapshot's rules speak in: its state, what pins it, a
// change; who did something; and what was done, for the pages, the API,
// the CLI and the box log.

// pinWords says what holds a snapshot in use, in the middle of a
// sentence: "the restore at 10:42 uses it". A pin ends with its operation.
func pinWords(p Pin, tz *time.Location) string {
	at := p.At.In(tz).Format("15:04")
	switch p.Kind {
	case OpRestore:
		return fmt.Sprintf("the restore at %s uses it", at)
	case OpFork:
		return fmt.Sprintf("the fork at %s uses it", at)
	case OpDelete, OpExpiry:
		return fmt.Sprintf("it is being deleted (%s)", at)
	case OpTake:
		return fmt.Sprintf("it is being taken (%s)", at)
	case OpKeep, OpUnkeep:
		return fmt.Sprintf("its keep is changing (%s)", at)
	case OpImport:
		return fmt.Sprintf("it is being imported (%s)", at)
	}
	return fmt.Sprintf("the %s at %s uses it", p.Kind, at)
}

// StateWords says a snapshot's state, in the middle of a sentence: "still
// being taken", "a failed take".
func StateWords(state string) string {
	switch state {
	case StateTaking:
		return "still being taken"
	case StateFailed:
		return "a failed take"
	case StateIncomplete:
		return "incomplete"
	case StateDeleting:
		return "being deleted"
	case StateUnavailable:
		return "unavailable"
	case StateLost:
		return "lost"
	}
	return state
}

// changeWords says a change as what a snapshot would become: "restored",
// "given a note".
func changeWords(c Change) string {
	switch c {
	case ChangeRestore:
		return "restored"
	case ChangeFork:
		return "forked"
	case ChangeKeep:
		return "kept"
	case ChangeUnkeep:
		return "unkept"
	case ChangeRename:
		return "renamed"
	case ChangeNote:
		return "given a note"
	}
	return string(c)
}

// TrashCostWords is the one home of what a box costs while it waits in the
// trash on a backend of kind, which the release dialog says and the trash
// lists.
func TrashCostWords(kind string) string {
	switch kind {
	case "proxmox":
		return "On Proxmox its guest stays stopped, with its links down and onboot off, like an earlier guest: its disk and snapshots keep their room on their storage, and count in it, while it waits."
	case "docker":
		return "On Docker its container stays, stopped, with its snapshot images: they keep their room on the Docker host while it waits."
	case "local":
		return "On this host its folder and its snapshots stay on disk, stopped, and keep their room while it waits."
	}
	return "Its guest stays, stopped, with its snapshots, and keeps their room while it waits."
}

// TrashedWords says where a release left the box: the one home of these
// words for the API, the CLI and the pages.
func TrashedWords(box string, until time.Time, tz *time.Location) string {
	return fmt.Sprintf("Moved %s to the trash until %s. Restore it from the trash until then, with its history.", box, until.In(tz).Format("Mon 2 Jan 15:04"))
}

// RunningWords says an operation that has not ended: "The restore op_…
// is still running (at rollback)." (the import's refusal, and the API's
// answer before an operation's end).
func RunningWords(kind, op, step string) string {
	return fmt.Sprintf("The %s %s is still running (at %s).", kind, op, step)
}

// UntrashingWords says a restore from the trash began (the page's flash).
func UntrashingWords(box string) string {
	return "Restoring " + box + " from the trash, with its history."
}

// CannotBeChangedWords says why a snapshot in its state cannot be
// changed so (restored, forked): "‘a’ is a failed take: it cannot be
// forked." (the refusal, and why the rows' item is disabled).
func CannotBeChangedWords(sn *Snapshot, c Change) string {
	return cannotBeWords(sn.Name, StateWords(sn.State), changeWords(c))
}

// UntrashedWords says a restore from the trash is done.
func UntrashedWords(box string, started bool) string {
	if started {
		return fmt.Sprintf("Restored %s from the trash, with its history, and started it.", box)
	}
	return fmt.Sprintf("Restored %s from the trash, with its history.", box)
}

// ByWords says who did something, the same on every page and in the log:
// "by you", "by the agent in (thread)", "by a boxsnap command", "by
// boxsnap: (why)", "outside boxsnap".
func ByWords(kind, threadTitle, why string) string {
	switch kind {
	case "owner":
		return "by you"
	case "agent":
		if threadTitle == "" {
			return "by the agent"
		}
		return fmt.Sprintf("by the agent in %s", threadTitle)
	case "cli":
		return "by a boxsnap command"
	case "outside":
		return "outside boxsnap"
	case "unknown":
		return "by unknown"
	default:
		if why == "" {
			return "by boxsnap"
		}
		return "by boxsnap: " + why
	}
}

// NothingChangedDryWords ends every dry run's answer.
const NothingChangedDryWords = "Nothing changed: this was a dry run."

// The box log's words: what each event says after its kind, written once
// here (or in the words.go of the seam that logs it) for the box page's
// History card and live region and the API's log, which show them as the
// core wrote them. An event's words are a phrase after its kind ("Snapshot
// taken: ‘before the migration’ (sn_…), disk, in 1.2 s"); the pages say the
// kind itself (app/web/pagemodel's EventWords).

// NamedID says a snapshot in the box log: "‘before the migration’ (sn_…)".
func NamedID(name, id string) string { return fmt.Sprintf("‘%s’ (%s)", name, id) }

// LogRestoreFailedWords: restore-failed, "the step it stopped at, the
// backend's words, and what boxsnap then observed".
func LogRestoreFailedWords(name, step, why, observed string) string {
	if step == "" {
		step = "the start"
	}
	return fmt.Sprintf("to ‘%s’ stopped at %s: %s; boxsnap then observed: %s", name, step, why, observed)
}

// logUnkeptWords: snapshot-unkept; atRelease where the person let it go
// with the box at its release.
func LogUnkeptWords(name string, atRelease bool) string {
	if atRelease {
		return fmt.Sprintf("‘%s’ goes with the box, at the person's word", name)
	}
	return fmt.Sprintf("‘%s’ goes with the box again", name)
}

// Words say the rate and the spend beside the ceiling, for Settings.
func (p PaidRate) Words() string {
	w := fmt.Sprintf("Held: about %s a month", Money(p.Rate, p.Currency))
	if p.Unknown > 0 {
		w += fmt.Sprintf(", and %s at a price unknown", Plural(p.Unknown, "snapshot", "snapshots"))
	}
	return w + fmt.Sprintf(" · This month so far: %s", Money(p.Spend, p.Currency))
}

// Words say the count and what is in it: "No snapshots", "1 snapshot",
// "3 snapshots: 1 kept, 1 undo".
func (c Counts) Words() string {
	if c.All == 0 {
		return "No snapshots"
	}
	w := Plural(c.All, "snapshot", "snapshots")
	var parts []string
	if c.Kept > 0 {
		parts = append(parts, fmt.Sprintf("%d kept", c.Kept))
	}
	if c.Undos > 0 {
		parts = append(parts, Plural(c.Undos, "undo", "undos"))
	}
	if c.Failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", c.Failed))
	}
	if len(parts) > 0 {
		w += ": " + strings.Join(parts, ", ")
	}
	return w
}

// PastWords warn that the rate is past the ceiling, on the tab and in
// Settings. The ceiling only refuses what is new, so boxsnap deletes
// nothing to get under it.
func (p PaidRate) PastWords() string {
	return fmt.Sprintf("Snapshots held on %s are about %s a month, past your ceiling of %s: new paid snapshots, undos, Keep and renewals are refused. Nothing is deleted.",
		p.Label, Money(p.Rate, p.Currency), Money(p.Ceiling, p.Currency))
}

// LimitWords say what the per-box limit counts: "2 of 5 toward the limit".
func (c Counts) LimitWords(perBox int) string {
	return fmt.Sprintf("%d of %d toward the limit", c.ToLimit, perBox)
}

// Plural says n things with the right noun: "1 snapshot", "2 snapshots".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	if strings.Contains(many, "%d") {
		return fmt.Sprintf(many, n)
	}
	return many
}

// Failures: what an operation says when it ends without doing what it was
// asked (its error's words, on the box's page, in the API's answer and
// the CLI's), and what boxsnap then observed of the box. A backend's own
// words come inside them as they are.

// UnfinishedWords says an operation that ended without doing what it was
// asked, for the pages, the API and the CLI, in the shape of a release
// that stopped: "The restore of amber-fox did not finish: why; boxsnap
// then observed: observed." what names it ("The restore of amber-fox",
// "The fork"); why and observed may be "". Words that say already what did
// not finish ("Release did not finish: …") are said once.
func UnfinishedWords(what, why, observed string) string {
	why = strings.TrimSuffix(why, ".")
	w := what + " did not finish"
	if i := strings.Index(why, " did not finish"); i > 0 && !strings.ContainsAny(why[:i], ":;(") {
		w = why
	} else if why != "" {
		w += ": " + why
	}
	if observed = strings.TrimSuffix(observed, "."); observed != "" {
		w += "; boxsnap then observed: " + observed
	}
	return w + "."
}

// What an operation that found its records gone says.
const (
	FailSnapshotGone = "the snapshot is gone"
)

// Refusals: the words of every refusal a person or an agent reads, grouped
// by the rule that refuses. The rules call these; words_test.go holds the
// specification's sentences to its text and the rest to the shape of a
// sentence. Where a sentence names a snapshot, its name is in ‘’.

// refusal is a refusal of code in words written here.
func refusal(code Code, words string) *Refusal {
	return &Refusal{Code: code, Words: words}
}

// Who may do what: one permission check, MayAct, serves every caller.
const (
	// SignInWords refuses a caller boxsnap does not know.
	SignInWords = "Sign in first."
	// NotAllowedWords refuses what the permission rules give no caller.
	NotAllowedWords = "Not allowed."
	// onlyPersonExportsWords: an export carries every file out.
	onlyPersonExportsWords = "Only the person can export snapshots: an export carries every file of the box, secrets included."
	// onlyPersonImportsWords: an archive from outside is a way in an
	// agent's thread never has.
	onlyPersonImportsWords = "Only the person can import snapshots: an archive from outside is no agent's to bring in."
	// onlyPersonSharesWords: a share code hands a copy to anyone.
	onlyPersonSharesWords = "Only the person can make, revoke or redeem a share code."
	// onlyPersonKeepsWords: keeping makes a snapshot the person's, so only
	// the person keeps one.
	onlyPersonKeepsWords   = "Only the person can keep a snapshot."
	onlyPersonRenamesWords = "Only the person can rename a snapshot or change its note."
	onlyPersonAdoptsWords  = "Only the person adopts a guest or a folder that exists already."

	onlyPersonSettingsWords = "Only the person changes settings."
	// OnlyPersonSettingsWords refuses an agent the settings' API, reading
	// or changing.
	OnlyPersonSettingsWords = "Only the person reads or changes settings."
)

// notByItselfWords refuses boxsnap's own sweeps what they never do: they
// see, take, delete and release, nothing more.
func notByItselfWords(act string) string {
	return fmt.Sprintf("boxsnap does not %s by itself.", act)
}

// keptOnlyPersonWords: a kept snapshot is the person's from the moment it
// is kept, so no agent can delete or change it.
func keptOnlyPersonWords(name, act string) string {
	return fmt.Sprintf("‘%s’ is kept by the person: only the person can %s it.", name, act)
}

// notThisThreadsWords: an agent deletes only what an agent of its thread
// took and nobody kept.
func notThisThreadsWords(name string) string {
	return fmt.Sprintf("‘%s’ was not taken by an agent of this thread: only the person can delete it.", name)
}

// onlyPersonForksExecutionWords: the box a thread runs on is forked by the
// person only.
func onlyPersonForksExecutionWords(box string) string {
	return fmt.Sprintf("Only the person forks %s: it is the box this thread runs on.", box)
}

// onlyThreadReleasesWords: a box is released by its own thread or the
// person.
func onlyThreadReleasesWords(box string) string {
	return fmt.Sprintf("Only the box's own thread or the person can release %s.", box)
}

// agentLeavesOutWords: an agent never sends a command, a host path, an
// adopt reference or a backend reference; it names a box template.
func agentLeavesOutWords(field string) string {
	return fmt.Sprintf("An agent makes a box only from a box template, by name: leave out %s.", field)
}

// What a caller cannot see reads as what does not exist, so a guessed ID
// tells nothing.

func noSnapshotWords(id string) string { return fmt.Sprintf("No snapshot %s that you can see.", id) }

func noBoxWords(ref string) string { return fmt.Sprintf("No box %s that you can see.", ref) }

func noOperationWords(id string) string { return fmt.Sprintf("No operation %s that you can see.", id) }

func noSnapshotNamedWords(name, box string) string {
	return fmt.Sprintf("No snapshot named ‘%s’ on %s that you can see.", name, box)
}

func NoThreadWords(id string) string { return fmt.Sprintf("No thread %s.", id) }

// NoUndoToGoBackWords refuses an undo of a box that has none.
func NoUndoToGoBackWords(box string) string { return fmt.Sprintf("%s has no undo to go back to.", box) }

// Names, notes and text: what a person or an agent may write.

const (
	nameEmptyWords   = "A snapshot's name cannot be empty."
	nameControlWords = "A snapshot's name cannot hold control characters."
	noteNotTextWords = "A note must be text."
	NameTakenWords   = "That name is taken on this box."
)

func nameTooLongWords(most, has int) string {
	return fmt.Sprintf("A snapshot's name is at most %d characters; this one has %d.", most, has)
}

func noteTooLongWords(bytes int) string {
	return fmt.Sprintf("A note is at most 1 KB; this one is %d bytes.", bytes)
}

// notUTF8Words: what (a name, a note, a title) is not text.
func notUTF8Words(what string) string { return fmt.Sprintf("%s is not valid UTF-8 text.", what) }

// lineControlWords: a line (a name, a title) holds no control or
// direction characters.
func lineControlWords(what string) string {
	return fmt.Sprintf("%s cannot hold control characters or characters that change the direction of text.", what)
}

// textControlWords: a text (a note) may hold lines and tabs, nothing else
// of the kind.
func textControlWords(what string) string {
	return fmt.Sprintf("%s cannot hold a NUL, control characters or characters that change the direction of text.", what)
}

// Operations: every change is an operation, recorded before it starts, one
// at a time per box; then one cut short by a restart, and a locked guest.

func requestIDUsedWords(requestID, kind, op string) string {
	return fmt.Sprintf("The request ID %s was used for another operation (%s %s).", requestID, kind, op)
}

// checkNowFirstWords: an operation boxsnap could not confirm after a
// restart holds the box until Check now settles it, so nothing else changes
// a box whose state boxsnap does not know.
func checkNowFirstWords(unknown string) string { return unknown + " Check now first." }

// LockedWords says that the backend left a guest locked, with the command
// for the host, as only root there can unlock it ("Proxmox left amber-fox
// locked (rollback). Run pct unlock 214 on pve-1."): the refusal, the box
// page, the dialogs and the doctor's notice.
func LockedWords(backend, box, lock, fix string) string {
	return fmt.Sprintf("%s left %s locked (%s). %s.", backend, box, lock, strings.TrimSuffix(fix, "."))
}

// backendNotInSettingsWords: a backend removed from settings; its records
// stay until the person forgets them.
func backendNotInSettingsWords(id string) string {
	return fmt.Sprintf("The backend %s is not in settings: its boxes and snapshots are unavailable.", id)
}

func noAnswerWords(host, box string) string {
	return fmt.Sprintf("%s does not answer: boxsnap cannot plan a snapshot of %s now.", host, box)
}

func guestGoneWords(box, backend string) string {
	return fmt.Sprintf("%s is gone from %s: boxsnap cannot find its guest.", box, backend)
}

// Takes, limits, room and cost.

// NoSnapshotsWords says that a backend offers no snapshots ("Boxes on the
// SSH host pool have no snapshots."), in the refusal and on the pages.
func NoSnapshotsWords(backend string) string {
	return fmt.Sprintf("Boxes on %s have no snapshots.", backend)
}

// storageFullWords: a take refused while the storage is past "Refuse new
// snapshots when a host's storage is past", with what to delete to free
// it: a full thin pool puts every guest on the host into I/O errors.
func storageFullWords(where string, full float64, past int, free string) string {
	return strings.TrimSpace(fmt.Sprintf("%s's storage would be %.0f%% full, past %d%%: boxsnap takes no snapshots there until it has room. %s",
		where, full, past, free))
}

// metadataFullWords: a thin pool's metadata refuses a take 5 points below
// the room setting, so the two move together (85% gives 80%).
func metadataFullWords(where string, full float64, past int, free string) string {
	return strings.TrimSpace(fmt.Sprintf("%s's thin pool metadata is %.0f%% full, past %d%%: boxsnap takes no snapshots there until it has room. %s",
		where, full, past, free))
}

// DeleteWords names what the caller may delete to make room, only the
// snapshots it may see, and "and others you cannot see" for the rest, so a
// refusal tells no thread of another's snapshots.
func DeleteWords(names []string, hidden int) string {
	switch {
	case len(names) == 0 && hidden == 0:
		return ""
	case len(names) == 0:
		return "Only snapshots you cannot see would free it: ask the person."
	}
	w := "Delete one to free it: " + strings.Join(names, ", ")
	if hidden > 0 {
		w += ", and others you cannot see"
	}
	return w + "."
}

// CeilingWords is the refusal of a change that would pass the paid
// ceiling, the same for the pages, the API, the CLI and an agent's tools.
func CeilingWords(label string, rate, ceiling float64, currency string) string {
	return fmt.Sprintf("It would bring snapshots held on %s to about %s a month, past your ceiling of %s. Delete one, or raise the ceiling in Settings, Snapshots, Paid snapshots.",
		label, Money(rate, currency), Money(ceiling, currency))
}

// priceUnknownOnlyPersonWords: a paid snapshot whose price boxsnap does
// not know is the person's to admit: the ceiling cannot bound a price it
// does not know.
func priceUnknownOnlyPersonWords(backend string) string {
	return fmt.Sprintf("The price of snapshots on %s is unknown: only the person admits one.", backend)
}

// Keep: its date, its days, and what can be kept.

// KeepDaysWords is the range of Keep's days, in the refusal, Settings and
// the API.
func KeepDaysWords(days int) string { return fmt.Sprintf("Keep keeps a snapshot 1 to %d days.", days) }

// CannotBeKeptWords: a snapshot is kept only if it can be forked after its
// box's release, the one way to use it then: the refusal, and Keep's
// disabled item and dialog.
func CannotBeKeptWords(box string) string {
	return fmt.Sprintf("Snapshots of %s cannot be kept: they could not be used after a release.", box)
}

// RenewNotKeptWords: "Keep 30 more days" renews a kept snapshot only (the
// refusal, and a bulk renewal's skip).
func RenewNotKeptWords(name string) string {
	return fmt.Sprintf("‘%s’ is not kept: Keep it first.", name)
}

// Eligibility: one check, eligible(snapshot, change), at the moment of the
// change, so a sweep that chose a snapshot earlier checks it again; and
// what the limit and the sweeps never delete.

func inUseWords(name, pin string) string { return fmt.Sprintf("‘%s’ is in use: %s.", name, pin) }

func savedNotThinnedWords(name string) string {
	return fmt.Sprintf("‘%s’ is saved: thinning never deletes it.", name)
}

func undoNotThinnedWords(name string) string {
	return fmt.Sprintf("‘%s’ is an undo: thinning never deletes one.", name)
}

// keptNeverDeletedWords: a kept snapshot is never deleted automatically:
// only the person's word deletes it.
func keptNeverDeletedWords(name string) string {
	return fmt.Sprintf("‘%s’ is kept: boxsnap never deletes it by itself.", name)
}

// keptUntilWords: expiry deletes a kept snapshot at its date, not before.
func keptUntilWords(name, date string) string {
	return fmt.Sprintf("‘%s’ is kept until %s.", name, date)
}

// personsNeverDeletedWords: the person's snapshot is never deleted
// automatically, by a sweep or by the limit.
func personsNeverDeletedWords(name string) string {
	return fmt.Sprintf("‘%s’ is the person's: boxsnap never deletes it by itself.", name)
}

// undoNotEvictedWords: the limit never deletes an undo, which it does not
// count either.
func undoNotEvictedWords(name string) string {
	return fmt.Sprintf("‘%s’ is an undo: the limit never deletes one.", name)
}

func notAnUndoWords(name string) string { return fmt.Sprintf("‘%s’ is not an undo.", name) }

// cannotBeWords: a snapshot whose state (still being taken, a failed take)
// does not allow the change (restored, forked, kept).
func cannotBeWords(name, state, change string) string {
	return fmt.Sprintf("‘%s’ is %s: it cannot be %s.", name, state, change)
}

func stillBeingTakenWords(name string) string {
	return fmt.Sprintf("‘%s’ is still being taken.", name)
}

func alreadyDeletingWords(name string) string {
	return fmt.Sprintf("‘%s’ is already being deleted.", name)
}

// unavailableWords: a snapshot where boxsnap cannot reach: its host does
// not answer, or its backend is not in settings.
func unavailableWords(name string) string {
	return fmt.Sprintf("‘%s’ is unavailable: boxsnap cannot reach where it is.", name)
}

func snapshotIsWords(name, state string) string { return fmt.Sprintf("‘%s’ is %s.", name, state) }

// earlierGuestForkOnlyWords: a snapshot on the box's earlier guest, one
// the box no longer runs on after a swap, is forked only.
func earlierGuestForkOnlyWords(name, box string) string {
	return fmt.Sprintf("‘%s’ is on %s's earlier guest: fork only.", name, box)
}

// heldCopyForkInsteadWords: a held copy is forked, not restored: it is a
// template that never starts.
func heldCopyForkInsteadWords(name string) string {
	return fmt.Sprintf("‘%s’ is a held copy: fork it instead.", name)
}

func notKeptWords(name string) string { return fmt.Sprintf("‘%s’ is not kept.", name) }

// outlivesBoxWords: a kept snapshot outlives its box's release; unkept it
// would have nothing to stay for.
func outlivesBoxWords(name string) string {
	return fmt.Sprintf("‘%s’ outlives its released box only because it is kept: keep it longer, or delete it.", name)
}

// Restore, undo and reset, which takes an undo first as a restore does.

// ReplaceTrueWords refuses box_restore without replace: true, so an agent
// says it means to replace the box; in the core and the tool.
func ReplaceTrueWords(box string) string {
	return fmt.Sprintf("box_restore needs replace: true. A restore replaces everything on %s since the snapshot.", box)
}

// CannotBeRestoredOnWords says that a backend's plan restores nothing of
// the box, in the refusal and the restore dialog.
func CannotBeRestoredOnWords(box, backend string) string {
	return fmt.Sprintf("%s cannot be restored on %s.", box, backend)
}

// NoUndoCanBeTakenWords: the backend takes no undo of the box (the
// refusal, and the restore dialog's line).
func NoUndoCanBeTakenWords(box, backend string) string {
	return fmt.Sprintf("No undo can be taken of %s on %s.", box, backend)
}

// Boxes, box templates and presence.

// BoxExistsWords refuses a box's name that is taken, in the core and a
// fork's check.
func BoxExistsWords(name string) string { return fmt.Sprintf("A box named %s exists already.", name) }

// ShareDaysWords refuses a share code's days outside 1 to most: the
// settings' default and a code's own.
func ShareDaysWords(most int) string { return fmt.Sprintf("A share code works 1 to %d days.", most) }

// Automatic history and saved snapshots.

func HistoryGiBWords(most int) string {
	return fmt.Sprintf("A box's history holds 1 to %d GiB before its oldest automatic snapshot goes.", most)
}

// SavedAlreadyWords: Save of a saved snapshot (the refusal, and the
// timeline's disabled Save).
func SavedAlreadyWords(name string) string { return fmt.Sprintf("‘%s’ is saved already.", name) }

// AutomaticAlreadyWords: Unsave of a snapshot that is not saved (the
// refusal, and the Unsave dialog's).
func AutomaticAlreadyWords(name string) string {
	return fmt.Sprintf("‘%s’ is automatic already.", name)
}

// The Snapshots tab's listing.

const (
	AfterNotAPlaceWords = "after is not a place this listing gave; start again from the first page."
	PageHoldsWords      = "A page holds 1 to 500 boxes."
)

// Settings and box templates: each number in its range, each field in its
// rule.

// wordsMachineName: the machine rule for a name (what: "A box's name", "A
// box template's name").
func MachineNameWords(what string) string {
	return what + " is 2 to 40 lowercase letters, digits and dashes, starting with a letter."
}

func perBoxRangeWords(least, most int) string {
	return fmt.Sprintf("Snapshots per box is %d to %d.", least, most)
}

func roomRangeWords(least, most int) string {
	return fmt.Sprintf("The room threshold is %d%% to %d%%.", least, most)
}

func approvalRangeWords(most int) string {
	return fmt.Sprintf("A request waits for your word 1 to %d minutes.", most)
}

func alsoRemovePathWords(p string) string {
	return fmt.Sprintf("%q: a path to remove is inside a home folder, with no .. and no leading /.", p)
}

func trashRangeWords(most int) string {
	return fmt.Sprintf("A released box stays in the trash 0 to %d hours.", most)
}

func ceilingNumberWords(backend string) string {
	return fmt.Sprintf("The ceiling for %s is a number of dollars.", backend)
}

func ceilingBelowZeroWords(backend string) string {
	return fmt.Sprintf("The ceiling for %s cannot be below zero.", backend)
}

func historyDaysWords(most int) string {
	return fmt.Sprintf("Automatic history is kept 1 to %d days.", most)
}

func checkSecondsWords(backend string, least, most int) string {
	return fmt.Sprintf("%s's boxes are checked every %d to %d seconds.", backend, least, most)
}

const ()

// What was done, as the pages, the API and the CLI say it.

// SavedWords says that a snapshot was saved: which says which snapshot
// beside its name (" of amber-fox", " (sn_…)").
func SavedWords(name, which, box string) string {
	return fmt.Sprintf("Saved ‘%s’%s: it counts in %s's limit and is never thinned.", name, which, box)
}

// UnsavedWords says that a saved snapshot is automatic again; which as in
// SavedWords, or "".
func UnsavedWords(name, which string) string {
	return fmt.Sprintf("‘%s’%s is automatic again: thinning may delete it as it ages.", name, which)
}

// RevokedWords says that a share code was revoked; code is its ID, or ""
// where the page shows it.
func RevokedWords(code string) string {
	if code == "" {
		return "Revoked: the code no longer works."
	}
	return fmt.Sprintf("Revoked %s: the code no longer works.", code)
}

// Empty lists, as the pages and the CLI say them.
const (
	// NoRequestsWords: no agent's request, asked through the form, waits
	// for the person.
	NoRequestsWords = "No requests wait for your word."
	// NoTemplatesWords: with no box template, no agent can make a box.
	NoTemplatesWords = "No box templates yet: agents cannot make boxes."
	// TrashEmptyWords: no released box waits in the trash.
	TrashEmptyWords = "The trash is empty."
	// EmptyFolderWords: a snapshot's folder with nothing in it.
	EmptyFolderWords = "An empty folder."
	// NoShareCodesWords: no share code was made (the Import page's list
	// said it with "yet", the CLI's without: the page's, clearer, is kept).
	NoShareCodesWords = "No share codes yet."
)

// AsksWords says an agent's request as the person reads it in the form:
// "Fix the sign-in flow asks to restore amber-fox to ‘before the migration’."
func AsksWords(thread, box, snapshot string) string {
	return fmt.Sprintf("%s asks to restore %s to ‘%s’.", thread, box, snapshot)
}

// TemplateSavedWords and TemplateRemovedWords say a box template's change.
func TemplateSavedWords(name string) string { return "Saved the box template " + name + "." }

// TemplateRemovedWords: its boxes stay.
func TemplateRemovedWords(name string) string { return "Removed the box template " + name + "." }

// NoHistoryToDeleteWords answers Delete history on a box with no automatic
// snapshots: nothing was done.
func NoHistoryToDeleteWords(box string) string {
	return fmt.Sprintf("%s has no automatic snapshots to delete.", box)
}

// NotSharedWords: a move, a takeover, or a fork asked on another host, of
// a box whose snapshots only its host reaches.
func NotSharedWords(box, host string) string {
	return fmt.Sprintf("%s's snapshots are on host %s only; set a content store to move boxes between hosts.", box, host)
}

// CannotBeForkedWords: a backend's plan forks nothing of the snapshot and
// says no reason of its own (where: "on pve-1"); the refusal, the fork
// dialog, the rows and the API's check say it.
func CannotBeForkedWords(name, where string) string {
	return fmt.Sprintf("‘%s’ cannot be forked %s.", name, where)
}

// The box page's Now row, its restore notice and its timeline: each says
// the box as the page's one read found it.
