package plans

import (
	"context"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// RestoreDry is a restore's dry run, or an undo's: what would change
// since the snapshot (a first page, where the backend can tell) and the
// plan's words.
type RestoreDry struct {
	Message  string                 `json:"message"`
	DryRun   bool                   `json:"dryRun"`
	Box      string                 `json:"box"`
	Snapshot string                 `json:"snapshot"`
	Name     string                 `json:"name"`
	Added    *int                   `json:"added,omitempty"`
	Removed  *int                   `json:"removed,omitempty"`
	Changed  *int                   `json:"changed,omitempty"`
	Total    *int                   `json:"total,omitempty"`
	Changes  []providers.FileChange `json:"changes,omitempty"`
}

// Restore checks a restore as the core's Restore does (RestoreDryRun) and
// says what it would change, admitting nothing.
func (p *Plans) Restore(ctx context.Context, c snapshots.Caller, req snapshots.RestoreRequest) (*RestoreDry, error) {
	d, err := p.k.RestoreDryRun(ctx, c, req)
	if err != nil {
		return nil, err
	}
	out := &RestoreDry{Message: snapshots.DryRunWords(d), DryRun: true, Box: d.Box.Name, Snapshot: d.Snapshot.ID, Name: d.Snapshot.Name}
	if ch := d.Changes; ch != nil {
		out.Added, out.Removed, out.Changed, out.Total, out.Changes = &ch.Added, &ch.Removed, &ch.Changed, &ch.Total, ch.Changes
	}
	return out, nil
}

// Undo checks an undo (a restore to the box's newest undo, of a reset or
// a restore) as the core's UndoNewest does and says what it would change,
// admitting nothing.
func (p *Plans) Undo(ctx context.Context, c snapshots.Caller, boxRef string, force bool) (*RestoreDry, error) {
	b, err := p.k.Box(ctx, c, boxRef)
	if err != nil {
		return nil, err
	}
	sn, err := p.k.NewestUndo(ctx, c, b.ID)
	if err != nil {
		return nil, err
	}
	if sn == nil {
		return nil, &snapshots.Refusal{Code: snapshots.CodeNotFound, Words: snapshots.NoUndoToGoBackWords(b.Name)}
	}
	return p.Restore(ctx, c, snapshots.RestoreRequest{Box: b.ID, Snapshot: sn.ID, Replace: true, Force: force})
}
