package providers

import "context"

// Carried is a backend whose snapshots record how their box ran when each
// was taken, so a box moved or taken over onto another host from one of
// them runs there as it ran here: its command, user, limits and network.
// A box's environment is never recorded (it may hold secrets): the core
// gives it from the box's template.
type Carried interface {
	// CarriedSpec is the run snapshot ref recorded, as a BoxSpec with its
	// Box, Template and Env left empty; ok is false for a snapshot taken
	// before snapshots recorded it.
	CarriedSpec(ctx context.Context, ref SnapshotRef) (spec BoxSpec, ok bool, err error)
}
