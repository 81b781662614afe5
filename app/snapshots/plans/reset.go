package plans

import (
	"context"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
)

// ResetDry is a reset's dry run: what the box becomes, the logins kept,
// what else ends, the undo taken first and what it takes.
type ResetDry struct {
	Message string `json:"message"`
	DryRun  bool   `json:"dryRun"`
	Box     string `json:"box"`
	// From says what the fresh box is a copy of, in words.
	From string `json:"from"`
	// Logins are the login files Keep logins carries over; none without.
	Logins []string `json:"logins,omitempty"`
	// Goes is what else the reset ends (the person's force only: an agent
	// is refused while any is so).
	Goes []string `json:"goes,omitempty"`
	Undo bool     `json:"undo"`
	// UndoBytes is what the undo adds on the box's storage, where the plan
	// says; UndoPrice is the backend's price for it, where it charges.
	UndoBytes *int64 `json:"undoBytes,omitempty"`
	UndoPrice string `json:"undoPrice,omitempty"`
}

// Reset checks a reset as the core's Reset does (ResetCheck) and says what
// it would do, admitting nothing.
func (p *Plans) Reset(ctx context.Context, c snapshots.Caller, req restore.ResetRequest) (*ResetDry, error) {
	if p == nil {
		return nil, errNoPlans
	}
	if err := p.z.ResetCheck(ctx, c, req); err != nil {
		return nil, err
	}
	b, err := p.k.Box(ctx, c, req.Box)
	if err != nil {
		return nil, err
	}
	pv, err := p.z.PreviewReset(ctx, c, b.ID, req.Template)
	if err != nil {
		return nil, err
	}
	d := &ResetDry{DryRun: true, Box: b.Name, From: pv.From, Undo: true}
	if req.KeepLogins {
		d.Logins = pv.Logins
	}
	if req.Force {
		d.Goes = p.r.Guard(ctx, c, b)
	}
	be, ok := p.k.BackendOf(b)
	if plan, err := p.k.PlanNow(ctx, b, be, nil); err == nil {
		d.UndoBytes = plan.Take.AddsBytes
	}
	if sn := be.Snapshotting(b.Kind); sn != nil && sn.Price != nil {
		d.UndoPrice = snapshots.PriceWords(sn.Price)
	}
	d.Message = resetDryWords(d, WhereWords(be, ok, b))
	return d, nil
}
