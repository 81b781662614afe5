package providers

import "time"

// Changed is a backend's answer to "did the box's disk change since boxsnap's
// last snapshot of it?".
type Changed string

// The answers. Unknown is honest: a backend that has no cheap way to tell
// says so, and the core takes an automatic snapshot at the backend's
// cadence instead.
const (
	ChangedYes     Changed = "yes"
	ChangedNo      Changed = "no"
	ChangedUnknown Changed = "unknown"
)

// ChangeCheck is what Changes answers.
type ChangeCheck struct {
	// Exists is false when the guest is gone.
	Exists bool
	// Running says the box runs now: automatic snapshots are taken while a
	// box runs, and one more when it stops.
	Running bool
	// Changed says whether the disk changed since the last snapshot of the
	// box that the backend knows of (for a stopped box: before it stopped).
	Changed Changed
	// Walked says the backend read the box's files to answer (the local
	// backend's change journal could not answer); Why says why.
	Walked bool
	Why    string
	// Paths is how many paths changed, where the backend counts them (0:
	// none, or not counted).
	Paths int
	// Restored says the box was restored since its last snapshot: Changed
	// is then yes, and Paths counts what changed since the restore, when
	// RestoredKnown says the backend watched it since.
	Restored, RestoredKnown bool
}

// Cadence is how often the core asks Changes of a backend's running boxes
// by default: the local and Docker backends every 15 seconds, Proxmox every
// 10 minutes (a snapshot there is a host task, and its API answers no
// cheaper question).
type Cadence struct {
	Every time.Duration
	// Why is the cadence's reason in words, for Settings.
	Why string
}
