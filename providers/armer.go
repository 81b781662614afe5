package providers

import "context"

// Armer is implemented by backends whose forks cannot start as their source
// until boxsnap arms them, so a fork never meets the network as its source:
// ForkSnapshot leaves the new guest with onboot off and every link down; the
// core arms its links just before its first start, checks it, and sets onboot
// only once the check before ready passes.
type Armer interface {
	// ArmFork brings the guest's links up, and with onboot also sets it to
	// start at its host's boot.
	ArmFork(ctx context.Context, g Guest, onboot bool) error
	// CheckFork is the check before ready: the fork holds none of its
	// source's addresses (MAC or IP), and carries the identity reset.
	// source is the snapshot it was made from, on its guest or held copy.
	CheckFork(ctx context.Context, fork Guest, source SnapshotRef) error
}

// Steps a restore records beside a backend's own (setting the box straight,
// and the swap that undoes a ZFS restore): the core runs them.
const (
	// StepAccess sets the box straight: its access, labels and locks, before
	// it starts (access first).
	StepAccess RestoreStep = "access"
	// StepAdopt makes the held copy the box's new guest (AdoptCopy).
	StepAdopt RestoreStep = "adopt"
	// StepEarlier makes the old guest the box's earlier guest.
	StepEarlier RestoreStep = "earlier"
)

// Access is what a box holds of boxsnap's, which a restore's last step writes
// back as it is now: the box, the thread it is of, the threads with a
// workspace on it, and its guest's generation.
type Access struct {
	Box        BoxIdentity
	Thread     string
	Threads    []string
	Generation int
}

// Straightener is implemented by backends that can set a box straight
// after a restore, its own or one made outside boxsnap: the box's access
// (the local box's .boxsnap/env; a Proxmox guest's description and tags)
// is rewritten to what the box holds now. It answers what it changed, in
// words; a lock it cannot clear comes back as a *LockedError.
type Straightener interface {
	SetStraight(ctx context.Context, g Guest, a Access) ([]string, error)
}

// Swapper is implemented by backends whose held copies can become a box's
// guest (a swap): the guest's identity to pass on, and the old guest made
// the box's earlier guest.
type Swapper interface {
	GuestIdentity(ctx context.Context, g Guest) (GuestIdentity, error)
	MakeEarlier(ctx context.Context, g Guest, box BoxIdentity) error
}
