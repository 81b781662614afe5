package snapshots

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// KeepRequest asks to keep a snapshot: for Days from today (0: the
// setting), or until a date.
type KeepRequest struct {
	Box       string
	Snapshot  string
	Days      int
	Until     *time.Time
	RequestID string
}

type keepParams struct {
	Until  time.Time `json:"until"`
	Unkeep bool      `json:"unkeep,omitempty"`
}

// EndOfUTCDay is a keep date: the end of the UTC day t falls on (the same day
// the label carries).
func EndOfUTCDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 23, 59, 59, 0, time.UTC)
}

// KeepUntil works out a keep date: from today for days, or the date given, at
// most 365 days from today. Keeping a kept snapshot again by days adds them
// to its date, so it never shortens it.
func KeepUntil(now time.Time, current *time.Time, days int, until *time.Time) (time.Time, error) {
	max := EndOfUTCDay(now.AddDate(0, 0, MaxKeepDays))
	if until != nil {
		u := EndOfUTCDay(*until)
		if u.Before(now) {
			return time.Time{}, refusal(CodeInvalid, keepFromTodayWords)
		}
		if u.After(max) {
			return time.Time{}, refusal(CodeInvalid, keepAtMostWords(MaxKeepDays))
		}
		return u, nil
	}
	if days < 1 || days > MaxKeepDays {
		return time.Time{}, refusal(CodeInvalid, KeepDaysWords(MaxKeepDays))
	}
	from := now
	if current != nil && current.After(now) {
		from = *current
	}
	u := EndOfUTCDay(from.AddDate(0, 0, days))
	if u.After(max) {
		u = max
	}
	return u, nil
}

// Keep admits a keep: only the person keeps, only a snapshot whose fork plan
// is ok, recorded as an operation and written on the backend's label first,
// so a snapshot found again after its record is lost is still kept.
func (s *Service) Keep(ctx context.Context, c Caller, req KeepRequest) (*Operation, error) {
	return s.keepOrUnkeep(ctx, c, req, false)
}

// Unkeep admits a "Stop keeping".
func (s *Service) Unkeep(ctx context.Context, c Caller, req KeepRequest) (*Operation, error) {
	return s.keepOrUnkeep(ctx, c, req, true)
}

func (s *Service) keepOrUnkeep(ctx context.Context, c Caller, req KeepRequest, unkeep bool) (*Operation, error) {
	act, change, kind := ActKeep, ChangeKeep, OpKeep
	if unkeep {
		act, change, kind = ActUnkeep, ChangeUnkeep, OpUnkeep
	}
	if op, err := s.Repeated(ctx, c, req.RequestID, kind, req.Box, req.Snapshot); err != nil || op != nil {
		return op, err
	}
	sn, b, err := s.SnapshotOfBox(ctx, c, req.Box, req.Snapshot)
	if err != nil {
		return nil, err
	}
	if err := MayAct(c, act, b, sn); err != nil {
		return nil, err
	}
	if op, err := s.ExistingRequest(ctx, s.st.Pool, c, req.RequestID, kind, &sn.ID); err != nil || op != nil {
		return op, err
	}
	settings, err := s.Settings(ctx)
	if err != nil {
		return nil, err
	}
	var until time.Time
	if !unkeep {
		days := req.Days
		if days == 0 && req.Until == nil {
			days = settings.KeepDays
		}
		if until, err = KeepUntil(s.now(), sn.KeptUntil, days, req.Until); err != nil {
			return nil, err
		}
		be, err := s.Backend(sn.BackendID)
		if err != nil {
			return nil, err
		}
		if snapping := be.Snap.Snapshotting(sn.BoxKind); snapping == nil || snapping.KeepsPastRelease == providers.KeepsNo || snapping.Fork == providers.ForkNone {
			return nil, refusal(CodePlan, CannotBeKeptWords(sn.BoxName))
		}
	}
	var op *Operation
	err = store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		b, sn, err := s.ChangeNow(ctx, tx, b.ID, sn.ID, req.Snapshot, change)
		if err != nil {
			return err
		}
		if !unkeep {
			if err := s.keepFits(ctx, tx, c, b, sn, settings.PerBox); err != nil {
				return err
			}
			// Keeping or renewing a paid snapshot is refused while the rate
			// held is past the ceiling, since a kept snapshot costs for as
			// long as it is kept.
			if err := s.CeilingAdmits(ctx, tx, c, sn.BackendID, keptCharge(sn), settings); err != nil {
				return err
			}
		}
		op, err = s.Admit(ctx, tx, OpRequest{Kind: kind, Box: b, Target: sn, Pins: []string{sn.ID}, Caller: c,
			RequestID: req.RequestID, Params: keepParams{Until: until, Unkeep: unkeep}})
		return err
	})
	return op, err
}

// runKeep writes the keep date on the backend's label first, then on the
// record; if the label cannot be written, nothing is kept.
func (s *Service) runKeep(ctx context.Context, op *Operation, p keepParams) (KeepResult, error) {
	sn, err := s.SnapshotByID(ctx, s.st.Pool, PinTarget(op))
	if errors.Is(err, store.ErrNotFound) {
		return KeepResult{}, s.Finish(ctx, op, OpFailed, nil, FailSnapshotGone, "")
	}
	if err != nil {
		return KeepResult{}, err
	}
	b, err := s.BoxByID(ctx, s.st.Pool, sn.BoxID)
	if err != nil {
		return KeepResult{}, err
	}
	change := ChangeKeep
	if p.Unkeep {
		change = ChangeUnkeep
	}
	pins, err := s.Pins(ctx, s.st.Pool, sn.ID, op.ID)
	if err != nil {
		return KeepResult{}, err
	}
	if err := Eligible(sn, change, pins, s.now(), s.TimeZone(ctx)); err != nil {
		return KeepResult{}, s.Finish(ctx, op, OpFailed, nil, err.Error(), "")
	}
	var until *time.Time
	if !p.Unkeep {
		until = &p.Until
		st, err := s.Settings(ctx)
		if err != nil {
			return KeepResult{}, err
		}
		if err := s.keepFits(ctx, s.st.Pool, CallerOf(op), b, sn, st.PerBox); err != nil {
			return KeepResult{}, s.Finish(ctx, op, OpFailed, nil, err.Error(), "")
		}
	}
	if err := s.Step(ctx, op, StepLabel); err != nil {
		return KeepResult{}, err
	}
	be, err := s.Backend(sn.BackendID)
	if err != nil {
		return KeepResult{}, s.Finish(ctx, op, OpFailed, nil, err.Error(), "")
	}
	if l, ok := be.Snap.(providers.Labeler); ok {
		if err := l.SetKeptUntil(ctx, RefOf(sn, b), until); err != nil {
			return KeepResult{}, s.Finish(ctx, op, OpFailed, nil, failLabelRefusedWords(be.Label, err), "")
		}
	}
	if err := s.Step(ctx, op, StepRecord); err != nil {
		return KeepResult{}, err
	}
	if err := s.st.CoreSnapshotKeep(ctx, s.st.Pool, db.CoreSnapshotKeepParams{ID: sn.ID, KeptUntil: until}); err != nil {
		return KeepResult{}, fmt.Errorf("record keep of %s: %w", sn.ID, err)
	}
	if p.Unkeep {
		s.Log(ctx, s.st.Pool, b.ID, EvSnapshotUnkept, CallerOf(op), LogUnkeptWords(sn.Name, false), sn.ID, op.ID, nil)
	} else {
		s.Log(ctx, s.st.Pool, b.ID, EvSnapshotKept, CallerOf(op), logKeptWords(sn.Name, p.Until), sn.ID, op.ID, nil)
	}
	return KeepResult{Snapshot: sn.ID, KeptUntil: until}, nil
}

// keepFits refuses to keep an undo when the box holds its limit already: a
// kept undo is an ordinary kept snapshot and counts in the limit.
func (s *Service) keepFits(ctx context.Context, q db.DBTX, c Caller, b *Box, sn *Snapshot, perBox int) error {
	if !sn.IsUndo() {
		return nil
	}
	all, err := s.SnapshotsOfBox(ctx, q, b.ID)
	if err != nil {
		return err
	}
	count := CountTowardLimit(all)
	if count < perBox {
		return nil
	}
	var names []string
	hidden := 0
	for _, o := range all {
		if o.IsUndo() || o.State == StateFailed || o.State == StateDeleting {
			continue
		}
		if MayAct(c, ActSee, b, o) == nil {
			names = append(names, "‘"+o.Name+"’")
		} else {
			hidden++
		}
	}
	return refusal(CodeLimit, keptUndoCountsWords(b.Name, count, perBox, DeleteWords(names, hidden)))
}
