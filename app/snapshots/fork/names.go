package fork

import (
	"context"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// NameFree refuses a new box's name for caller c when a box that is not
// released holds it. Box names are one per install, so a name another
// thread's box holds cannot be given; an agent that may not see that box
// is told only that the name cannot be used, never that a box holds it,
// as any other read of another thread's box answers as if it were not
// there. A name held by a box the caller may see says so. Every surface
// (the pages, the API and its tools, the CLI) asks here, before anything
// is taken or made.
func (s *Forks) NameFree(ctx context.Context, c snapshots.Caller, name string) error {
	name = strings.TrimSpace(name)
	if name == "" {
		return nil
	}
	existing := s.holder(ctx, name)
	switch {
	case existing == nil:
		return nil
	case snapshots.MayAct(c, snapshots.ActSee, existing, nil) != nil:
		return refusal(snapshots.CodeConflict, forkNameUnusableWords(name))
	default:
		return refusal(snapshots.CodeConflict, snapshots.BoxExistsWords(name))
	}
}

// holder is the box that holds name now, or nil when none does (a
// released box's name is free again).
func (s *Forks) holder(ctx context.Context, name string) *snapshots.Box {
	b, err := s.k.BoxByName(ctx, name)
	if err != nil || b.State == snapshots.BoxReleased {
		return nil
	}
	return b
}
