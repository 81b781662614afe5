package snapshots

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// ResetDry is what a dry run of a reset answers: what the box becomes, what
// goes and what stays, the undo taken first and its cost. A dry run changes
// nothing: no operation, no job, no undo, no reservation.
type ResetDry struct {
	Box *Box
	// From says what the fresh box is a copy of, in words.
	From string
	// Logins are the login files carried over, with Keep logins; nil
	// without.
	Logins []string
	// Goes is what the guard names that the reset would end too (the
	// person's "Reset anyway" only: an agent is refused while any is so).
	Goes []string
	// UndoBytes is what the undo adds on the box's storage, where the plan
	// says; UndoPrice is the backend's price for it, nil where it charges
	// nothing.
	UndoBytes *int64
	UndoPrice string
	// Where is the box's place, for the undo's space ("on this host").
	Where string
}

// ResetDryRun checks a reset as Reset does (who may, the setting, the
// template, the plan, the room and the price of its undo, the guard, the
// box's state) and says what it would do, admitting nothing.
func (s *Service) ResetDryRun(ctx context.Context, c Caller, req ResetRequest) (*ResetDry, error) {
	req.dryRun, req.RequestID = true, ""
	if _, err := s.Reset(ctx, c, req); err != nil {
		return nil, err
	}
	b, err := s.Box(ctx, c, req.Box)
	if err != nil {
		return nil, err
	}
	pv, err := s.PreviewReset(ctx, c, b.ID, req.Template)
	if err != nil {
		return nil, err
	}
	be, ok := s.BackendOf(b)
	d := &ResetDry{Box: b, From: pv.From, Where: WhereWords(be, ok, b)}
	if req.KeepLogins {
		d.Logins = pv.Logins
	}
	if req.Force {
		d.Goes = s.Guard(ctx, c, b)
	}
	if plan, err := s.PlanNow(ctx, b, be, nil); err == nil {
		d.UndoBytes = plan.Take.AddsBytes
	}
	if sn := be.Snapshotting(b.Kind); sn != nil && sn.Price != nil {
		d.UndoPrice = PriceWords(sn.Price)
	}
	return d, nil
}

// resetEligibleNow is the check a reset's admission makes in its
// transaction, read without locking: the box is ready, nothing is unsettled
// on it, and its undo is within the ceiling.
func (s *Service) resetEligibleNow(ctx context.Context, c Caller, b *Box, be Backend, settings Settings) error {
	b2, err := s.BoxByID(ctx, s.st.Pool, b.ID)
	if err != nil {
		return boxNotFound(b.Name)
	}
	b = b2
	if b.State != BoxReady {
		return refusal(CodeBusy, boxIsWords(b.Name, b.State))
	}
	if err := s.Unsettled(ctx, s.st.Pool, b); err != nil {
		return err
	}
	if err := s.ceilingAdmits(ctx, s.st.Pool, c, b.BackendID, chargeOfPlan(be.Snap.Snapshotting(b.Kind)), settings); err != nil {
		return undoPriceWords(Agent(""), err)
	}
	return nil
}

// UndoDryRun checks an undo (box_undo: a restore to the box's newest undo)
// as UndoNewest does and says what it would change, admitting nothing.
func (s *Service) UndoDryRun(ctx context.Context, c Caller, boxRef string, force bool) (*RestoreDry, error) {
	b, err := s.Box(ctx, c, boxRef)
	if err != nil {
		return nil, err
	}
	id, err := s.st.ResetNewestUndo(ctx, s.st.Pool, b.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, refusal(CodeNotFound, noUndoToGoBackWords(b.Name))
	}
	if err != nil {
		return nil, fmt.Errorf("read %s's undos: %w", b.Name, err)
	}
	return s.RestoreDryRun(ctx, c, RestoreRequest{Box: b.ID, Snapshot: id, Replace: true, Force: force})
}
