package providers

import (
	"errors"
	"fmt"
)

// Errors a backend returns, wrapped with its own words. The core decides what
// each means for a record: ErrUnreachable marks nothing, ErrIncomplete makes a
// snapshot incomplete, ErrNotFound makes a listing's absence count.
var (
	// ErrUnreachable means the backend's host did not answer.
	ErrUnreachable = errors.New("host does not answer")
	// ErrNotFound means the guest or snapshot does not exist on the backend.
	ErrNotFound = errors.New("not found")
	// ErrIncomplete means part of a snapshot exists.
	ErrIncomplete = errors.New("snapshot incomplete")
	// ErrNoRoom means the storage is too full for what was asked.
	ErrNoRoom = errors.New("no room")
	// ErrUnsupported means the backend does not offer what was asked.
	ErrUnsupported = errors.New("not offered by this backend")
	// ErrRefused means the backend refuses what was asked as asked (a kind it
	// does not have, a template that is not there, a bad reference): the
	// caller's request is at fault, and the core answers it with a 4xx in the
	// backend's words. A RefusedError is one.
	ErrRefused = errors.New("refused")
	// ErrTaskPending is what a Recorder's TaskStarted answers when the core
	// takes the wait for the task it records upon itself: the backend returns
	// it (wrapped or not) at once, without waiting and without cleaning up,
	// and the core asks ProviderTask later where the task got to. Nothing
	// failed.
	ErrTaskPending = errors.New("provider task pending")
)

// LockedError is returned when a host left the guest locked; its message is
// the lock and the host's command that clears it.
type LockedError struct {
	Lock Lock
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("locked (%s): %s", e.Lock.Lock, e.Lock.Fix)
}

// RefusedError is a refusal in words a person reads. TryAgain is set when it
// holds only for now (a full storage, a backup's lock).
type RefusedError struct {
	Why      string
	TryAgain bool
}

func (e *RefusedError) Error() string { return e.Why }

// Is makes errors.Is(err, ErrRefused) hold for a RefusedError.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }
