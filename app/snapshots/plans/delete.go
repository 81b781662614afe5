package plans

import (
	"context"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// DeleteDry is a delete's dry run: the snapshot that would go, what it
// frees, and the Delete dialog's words.
type DeleteDry struct {
	Message  string `json:"message"`
	DryRun   bool   `json:"dryRun"`
	Box      string `json:"box"`
	Snapshot string `json:"snapshot"`
	Name     string `json:"name"`
	// FreedBytes is what deleting it frees where known (its own size), as
	// the delete's result says it; Freed says it in words.
	FreedBytes *int64 `json:"freedBytes,omitempty"`
	Freed      string `json:"freed"`
	// Lines are the Delete dialog's lines: what it frees, that it is kept,
	// that it is an undo.
	Lines []string `json:"lines"`
}

// Delete checks a delete as the core's Delete does (who may, the
// snapshot's eligibility now, with its pins) and says what it would delete
// and free, admitting nothing.
func (p *Plans) Delete(ctx context.Context, c snapshots.Caller, req snapshots.DeleteRequest) (*DeleteDry, error) {
	if p == nil {
		return nil, errNoPlans
	}
	sn, b, err := p.k.SnapshotOfBox(ctx, c, req.Box, req.Snapshot)
	if err != nil {
		return nil, err
	}
	if err := snapshots.MayAct(c, snapshots.ActDelete, b, sn); err != nil {
		return nil, err
	}
	list, err := p.k.List(ctx, snapshots.Owner(), snapshots.ListQuery{Box: b.ID})
	if err != nil {
		return nil, err
	}
	var pins []snapshots.Pin
	if len(list) > 0 {
		pins = list[0].Pins[sn.ID]
	}
	tz := p.k.TimeZone(ctx)
	if err := snapshots.Eligible(sn, snapshots.ChangeDelete, pins, p.now(), tz); err != nil {
		return nil, err
	}
	be, ok := p.k.BackendOf(b)
	d := &DeleteDry{DryRun: true, Box: b.Name, Snapshot: sn.ID, Name: sn.Name, Lines: DeleteDialogLines(b, sn, WhereWords(be, ok, b), tz)}
	if sn.SizeBytes != nil && sn.SizeMeaning != nil && *sn.SizeMeaning == "own" {
		d.FreedBytes = sn.SizeBytes
	}
	own := "own"
	d.Freed = snapshots.SizeOfWords(d.FreedBytes, &own)
	d.Message = deleteDryWords(d)
	return d, nil
}
