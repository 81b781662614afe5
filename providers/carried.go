package providers

import "context"

// Carried is a backend whose snapshots record how their box ran when each
// was taken, so a box moved or taken over onto another host from one of
// them runs there as it ran here: its command, user, limits and network,
// and whether its process ran (BoxSpec.Ran).
// A box's environment is never recorded in a snapshot (it may hold
// secrets): the core gives it from its own record of how the box was made.
type Carried interface {
	// CarriedSpec is the run snapshot ref recorded, as a BoxSpec with its
	// Box, Template and Env left empty; ok is false for a snapshot taken
	// before snapshots recorded it.
	CarriedSpec(ctx context.Context, ref SnapshotRef) (spec BoxSpec, ok bool, err error)
}

// CarriedFork is a backend that may fork a snapshot on a host holding no
// record of how the snapshot's box runs (a fork asked on another host than
// the box's own): the core gives the environment it recorded for that box,
// which no snapshot records, so the fork runs with it there as a fork on
// the box's own host runs with its source box's.
type CarriedFork interface {
	// ForkSnapshotCarried is ForkSnapshot, the new box running with env
	// where this host holds no run of the snapshot's box; where it holds
	// one, that run's environment, as ForkSnapshot's. env is never logged
	// nor put in an error.
	ForkSnapshotCarried(ctx context.Context, ref SnapshotRef, box BoxIdentity, env map[string]string, rec Recorder) (Guest, error)
}

// Backfill is a backend that ships to a content store the snapshots a
// host took before the store was set, which are on that host alone until
// then; a box whose newest snapshot is one cannot move.
type Backfill interface {
	// UnshippedSnapshots counts this host's snapshots not in the content
	// store yet.
	UnshippedSnapshots(ctx context.Context) (int, error)
	// ShipUnshipped ships at most max of them, oldest first, and answers
	// how many it shipped and how many are left.
	ShipUnshipped(ctx context.Context, max int) (shipped, left int, err error)
	// InContentStore says whether snapshot ref is in the content store,
	// asked of the store itself, so any host answers it alike.
	InContentStore(ctx context.Context, ref SnapshotRef) (bool, error)
}
