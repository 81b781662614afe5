package boxes

import (
	"context"
	"errors"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// ReleaseChecks are a release's and an emptying of the trash's checks,
// asked alone by their dry runs (package plans). They are a type of their
// own so that Boxes, already the widest type of the core, grows no method.
type ReleaseChecks struct{ s *Boxes }

// ReleaseChecksOf is the release checks of s.
func ReleaseChecksOf(s *Boxes) *ReleaseChecks { return &ReleaseChecks{s: s} }

// Release checks a release as ReleaseBox does (deleteKept: as
// ReleaseBoxDeletingKept does): who may, the box's state, what is
// unsettled on it; it runs them in the release's own transaction and rolls
// it back, admitting nothing.
func (r *ReleaseChecks) Release(ctx context.Context, c snapshots.Caller, ref string, deleteKept bool) error {
	if deleteKept && !c.IsPerson() {
		return &snapshots.Refusal{Code: snapshots.CodeForbidden, Words: onlyPersonDeletesKeptWords}
	}
	return r.check(ctx, c, ref, releaseParams{DeleteKept: deleteKept})
}

// EmptyTrash checks an emptying of the trash as EmptyTrash does: only the
// person empties it, and only a box in the trash; it admits nothing.
func (r *ReleaseChecks) EmptyTrash(ctx context.Context, c snapshots.Caller, ref string) error {
	if !c.IsPerson() && c.Kind != snapshots.CallerSystem {
		return &snapshots.Refusal{Code: snapshots.CodeForbidden, Words: onlyPersonEmptiesTrashWords}
	}
	return r.check(ctx, c, ref, releaseParams{Empty: true})
}

// ReleaseWords says what a release of b does now, as Boxes.ReleaseWords
// says it in the release dialog.
func (r *ReleaseChecks) ReleaseWords(ctx context.Context, b *snapshots.Box) (string, error) {
	return r.s.ReleaseWords(ctx, b)
}

func (r *ReleaseChecks) check(ctx context.Context, c snapshots.Caller, ref string, p releaseParams) error {
	p.dryRun = true
	if _, err := r.s.releaseBox(ctx, c, ref, "", p); !errors.Is(err, errReleaseChecked) {
		return err
	}
	return nil
}
