package providers

import "context"

// Armer is implemented by backends whose forks cannot start as their source
// until boxsnap arms them (section 9; decided during unit 7): ForkSnapshot
// leaves the new guest with onboot off and every link down; the core arms
// its links just before its first start, checks it, and sets onboot only
// once the check before ready passes.
type Armer interface {
	// ArmFork brings the guest's links up, and with onboot also sets it to
	// start at its host's boot.
	ArmFork(ctx context.Context, g Guest, onboot bool) error
	// CheckFork is the check before ready: the fork holds none of its
	// source's addresses (MAC or IP), and carries the identity reset.
	// source is the snapshot it was made from, on its guest or held copy.
	CheckFork(ctx context.Context, fork Guest, source SnapshotRef) error
}
