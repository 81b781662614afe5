package plans

import (
	"context"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
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
	// AsksFirst says an agent's restore would ask the person first, and
	// wait for their word, as the restore an approval starts.
	AsksFirst bool `json:"asksFirst,omitempty"`
	// UndoBytes is what the undo taken first adds on the box's storage,
	// where the plan says; UndoPrice is the backend's price for it, where
	// it charges. Neither is set when no undo is taken.
	UndoBytes *int64 `json:"undoBytes,omitempty"`
	UndoPrice string `json:"undoPrice,omitempty"`
}

// Restore checks a restore as the core's Restore does (RestoreDryRun) and
// says what it would change, admitting nothing.
func (p *Plans) Restore(ctx context.Context, c snapshots.Caller, req snapshots.RestoreRequest) (*RestoreDry, error) {
	if p == nil {
		return nil, errNoPlans
	}
	asks, err := p.asksFirst(ctx, c, req)
	if err != nil {
		return nil, err
	}
	if asks {
		// The checks of the restore the person's yes would start.
		req.Consent = &snapshots.Consent{By: "the person"}
	}
	d, err := p.r.RestoreDryRun(ctx, c, req)
	if err != nil {
		return nil, err
	}
	out := &RestoreDry{Message: restore.DryRunWords(d), DryRun: true, Box: d.Box.Name, Snapshot: d.Snapshot.ID, Name: d.Snapshot.Name, AsksFirst: asks}
	if d.Undo {
		be, ok := p.k.BackendOf(d.Box)
		if plan, err := p.k.PlanNow(ctx, d.Box, be, nil); err == nil {
			out.UndoBytes = plan.Take.AddsBytes
		}
		if sn := be.Snapshotting(d.Box.Kind); sn != nil && sn.Price != nil {
			out.UndoPrice = snapshots.PriceWords(sn.Price)
		}
		if w := undoCostWords(out.UndoBytes, out.UndoPrice, WhereWords(be, ok, d.Box)); w != "" {
			out.Message = strings.TrimSuffix(out.Message, snapshots.NothingChangedDryWords) + w + " " + snapshots.NothingChangedDryWords
		}
	}
	if asks {
		out.Message = asksFirstWords(d.Box.Name) + " " + out.Message
	}
	if ch := d.Changes; ch != nil {
		out.Added, out.Removed, out.Changed, out.Total, out.Changes = &ch.Added, &ch.Removed, &ch.Changed, &ch.Total, ch.Changes
	}
	return out, nil
}

// Undo checks an undo (a restore to the box's newest undo, of a reset or
// a restore) as the core's UndoNewest does and says what it would change,
// admitting nothing.
func (p *Plans) Undo(ctx context.Context, c snapshots.Caller, boxRef string, force bool) (*RestoreDry, error) {
	if p == nil {
		return nil, errNoPlans
	}
	b, err := p.k.Box(ctx, c, boxRef)
	if err != nil {
		return nil, err
	}
	// The newest undo whoever took it, as the real undo picks it: one the
	// caller may not see is refused by the restore's own check, in the
	// real call's words, not said to be missing.
	id, err := p.z.NewestUndoID(ctx, c, b.ID)
	if err != nil {
		return nil, err
	}
	if id == "" {
		return nil, &snapshots.Refusal{Code: snapshots.CodeNotFound, Words: snapshots.NoUndoToGoBackWords(b.Name)}
	}
	return p.Restore(ctx, c, snapshots.RestoreRequest{Box: b.ID, Snapshot: id, Replace: true, Force: force})
}

// asksFirst says whether an agent's restore would ask the person instead
// of restoring, as the core's Restore decides it: on a box threads run on,
// and on its own when Settings turns "Agents may restore their own boxes"
// off.
func (p *Plans) asksFirst(ctx context.Context, c snapshots.Caller, req snapshots.RestoreRequest) (bool, error) {
	if c.Kind != snapshots.CallerAgent || req.Consent != nil {
		return false, nil
	}
	b, err := p.k.Box(ctx, c, req.Box)
	if err != nil {
		return false, nil // the restore's own checks refuse it, in their words
	}
	settings, err := p.k.Settings(ctx)
	if err != nil {
		return false, err
	}
	return restore.ThreadsRunOn(c, b) || !settings.AgentsMayRestore, nil
}
