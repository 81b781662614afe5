package snapshots

import "errors"

// Refusal is a refusal in words a person or an agent reads, which words.go
// holds (a rule makes one with refusal(code, words…)). Nothing has changed
// when one is returned. Code says what kind of refusal it is; each surface
// turns a code into its own answer (the API's and the web's HTTP status, in
// one place each). TryAgain is set when the refusal holds only for now (a
// storage too full, a backup's lock).
type Refusal struct {
	Code     Code
	Words    string
	TryAgain bool
	// cause is what made it, where that was an error of the caller's own
	// (a reader that stopped), so the caller can still tell it with
	// errors.As.
	cause error
}

func (r *Refusal) Error() string { return r.Words }

// Unwrap is the caller's own error that made the refusal, if any.
func (r *Refusal) Unwrap() error { return r.cause }

// Code is the kind of a refusal, the same on every surface (the API's
// "code").
type Code string

// Refusal codes.
const (
	CodeNotFound  Code = "not_found" // no such thing that the caller can see
	CodeInvalid   Code = "invalid"   // the request itself is wrong
	CodeForbidden Code = "forbidden" // the caller may not do this
	CodeConflict  Code = "conflict"  // the state of things does not allow it now
	CodeLimit     Code = "limit"     // a limit (snapshots per box, kept) is reached
	CodeRoom      Code = "room"      // the storage has no room
	CodeLocked    Code = "locked"    // the backend holds a lock on the box
	CodeGuard     Code = "guard"     // a restore's guard (work, terminals, the desktop)
	CodeBusy      Code = "busy"      // another operation of the box runs
	CodePlan      Code = "plan"      // the backend's plan does not offer it
	CodeCannot    Code = "cannot"    // the box's backend cannot do this at all
	CodeProtected Code = "protected" // a snapshot boxsnap never deletes by itself
	CodeGone      Code = "gone"      // it was there and is no more (a share code)
	CodeRunning   Code = "running"   // what was asked for is still running
	CodeBackend   Code = "backend"   // the backend refused what was asked
	// CodeUnreachable: a backend or another boxsnap does not answer.
	CodeUnreachable Code = "unreachable"
	// CodeRequestReused: a request ID (a retry key) already named another
	// operation, or another call's arguments.
	CodeRequestReused Code = "request_reused"
)

// Codes are every refusal code of the core, for the surfaces' tests that
// each has its answer.
func Codes() []Code {
	return []Code{CodeNotFound, CodeInvalid, CodeForbidden, CodeConflict, CodeLimit, CodeRoom,
		CodeLocked, CodeGuard, CodeBusy, CodePlan, CodeCannot, CodeProtected, CodeGone,
		CodeRunning, CodeBackend, CodeUnreachable, CodeRequestReused}
}

// AsRefusal returns err's Refusal, if it is one.
func AsRefusal(err error) (*Refusal, bool) {
	var r *Refusal
	if errors.As(err, &r) {
		return r, true
	}
	return nil, false
}

// SnapshotNotFound is what a caller reads for a snapshot it may not see as
// for one that does not exist, so a guessed ID tells nothing.
func SnapshotNotFound(id string) *Refusal {
	return refusal(CodeNotFound, noSnapshotWords(id))
}

func BoxNotFound(ref string) *Refusal {
	return refusal(CodeNotFound, noBoxWords(ref))
}

// CutShort is a refusal of an export file that stopped, which keeps the
// reader's error as its cause: a surface that capped the body it read tells
// its own "too large" from it.
func CutShort(r *Refusal, err error) *Refusal {
	r.cause = err
	return r
}
