package keep

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

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
	max := EndOfUTCDay(now.AddDate(0, 0, snapshots.MaxKeepDays))
	if until != nil {
		u := EndOfUTCDay(*until)
		if u.Before(now) {
			return time.Time{}, refusal(snapshots.CodeInvalid, keepFromTodayWords)
		}
		if u.After(max) {
			return time.Time{}, refusal(snapshots.CodeInvalid, keepAtMostWords(snapshots.MaxKeepDays))
		}
		return u, nil
	}
	if days < 1 || days > snapshots.MaxKeepDays {
		return time.Time{}, refusal(snapshots.CodeInvalid, snapshots.KeepDaysWords(snapshots.MaxKeepDays))
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
func (s *Keeps) Keep(ctx context.Context, c snapshots.Caller, req snapshots.KeepRequest) (*snapshots.Operation, error) {
	return s.keepOrUnkeep(ctx, c, req, false)
}

// Unkeep admits a "Stop keeping".
func (s *Keeps) Unkeep(ctx context.Context, c snapshots.Caller, req snapshots.KeepRequest) (*snapshots.Operation, error) {
	return s.keepOrUnkeep(ctx, c, req, true)
}

func (s *Keeps) keepOrUnkeep(ctx context.Context, c snapshots.Caller, req snapshots.KeepRequest, unkeep bool) (*snapshots.Operation, error) {
	act, change, kind := snapshots.ActKeep, snapshots.ChangeKeep, snapshots.OpKeep
	if unkeep {
		act, change, kind = snapshots.ActUnkeep, snapshots.ChangeUnkeep, snapshots.OpUnkeep
	}
	if op, err := s.k.Repeated(ctx, c, req.RequestID, kind, req.Box, req.Snapshot); err != nil || op != nil {
		return op, err
	}
	sn, b, err := s.k.SnapshotOfBox(ctx, c, req.Box, req.Snapshot)
	if err != nil {
		return nil, err
	}
	if err := snapshots.MayAct(c, act, b, sn); err != nil {
		return nil, err
	}
	if op, err := s.k.ExistingRequest(ctx, s.st.Pool, c, req.RequestID, kind, &sn.ID); err != nil || op != nil {
		return op, err
	}
	settings, err := s.k.Settings(ctx)
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
		be, err := s.k.Backend(sn.BackendID)
		if err != nil {
			return nil, err
		}
		if snapping := be.Snap.Snapshotting(sn.BoxKind); snapping == nil || snapping.KeepsPastRelease == providers.KeepsNo || snapping.Fork == providers.ForkNone {
			return nil, refusal(snapshots.CodePlan, snapshots.CannotBeKeptWords(sn.BoxName))
		}
	}
	var op *snapshots.Operation
	err = store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		b, sn, err := s.k.ChangeNow(ctx, tx, b.ID, sn.ID, req.Snapshot, change)
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
			if err := s.k.CeilingAdmits(ctx, tx, c, sn.BackendID, keptCharge(sn), settings); err != nil {
				return err
			}
		}
		op, err = s.k.Admit(ctx, tx, snapshots.OpRequest{Kind: kind, Box: b, Target: sn, Pins: []string{sn.ID}, Caller: c,
			RequestID: req.RequestID, Params: keepParams{Until: until, Unkeep: unkeep}})
		return err
	})
	return op, err
}

// runKeep writes the keep date on the backend's label first, then on the
// record; if the label cannot be written, nothing is kept.
func (s *Keeps) runKeep(ctx context.Context, op *snapshots.Operation, p keepParams) (snapshots.KeepResult, error) {
	sn, err := s.k.SnapshotByID(ctx, s.st.Pool, snapshots.PinTarget(op))
	if errors.Is(err, store.ErrNotFound) {
		return snapshots.KeepResult{}, s.k.End(ctx, op, snapshots.OpFailed, snapshots.FailSnapshotGone, "")
	}
	if err != nil {
		return snapshots.KeepResult{}, err
	}
	b, err := s.k.BoxByID(ctx, s.st.Pool, sn.BoxID)
	if err != nil {
		return snapshots.KeepResult{}, err
	}
	change := snapshots.ChangeKeep
	if p.Unkeep {
		change = snapshots.ChangeUnkeep
	}
	pins, err := s.k.Pins(ctx, s.st.Pool, sn.ID, op.ID)
	if err != nil {
		return snapshots.KeepResult{}, err
	}
	if err := snapshots.Eligible(sn, change, pins, s.now(), s.k.TimeZone(ctx)); err != nil {
		return snapshots.KeepResult{}, s.k.End(ctx, op, snapshots.OpFailed, err.Error(), "")
	}
	var until *time.Time
	if !p.Unkeep {
		until = &p.Until
		st, err := s.k.Settings(ctx)
		if err != nil {
			return snapshots.KeepResult{}, err
		}
		if err := s.keepFits(ctx, s.st.Pool, snapshots.CallerOf(op), b, sn, st.PerBox); err != nil {
			return snapshots.KeepResult{}, s.k.End(ctx, op, snapshots.OpFailed, err.Error(), "")
		}
	}
	if err := s.k.Step(ctx, op, snapshots.StepLabel); err != nil {
		return snapshots.KeepResult{}, err
	}
	be, err := s.k.Backend(sn.BackendID)
	if err != nil {
		return snapshots.KeepResult{}, s.k.End(ctx, op, snapshots.OpFailed, err.Error(), "")
	}
	if l, ok := be.Snap.(providers.Labeler); ok {
		if err := l.SetKeptUntil(ctx, snapshots.RefOf(sn, b), until); err != nil {
			return snapshots.KeepResult{}, s.k.End(ctx, op, snapshots.OpFailed, failLabelRefusedWords(be.Label, err), "")
		}
	}
	if err := s.k.Step(ctx, op, snapshots.StepRecord); err != nil {
		return snapshots.KeepResult{}, err
	}
	if err := s.st.CoreSnapshotKeep(ctx, s.st.Pool, db.CoreSnapshotKeepParams{ID: sn.ID, KeptUntil: until}); err != nil {
		return snapshots.KeepResult{}, fmt.Errorf("record keep of %s: %w", sn.ID, err)
	}
	if p.Unkeep {
		s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvSnapshotUnkept, snapshots.CallerOf(op), snapshots.LogUnkeptWords(sn.Name, false), sn.ID, op.ID, nil)
	} else {
		s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvSnapshotKept, snapshots.CallerOf(op), logKeptWords(sn.Name, p.Until), sn.ID, op.ID, nil)
	}
	return snapshots.KeepResult{Snapshot: sn.ID, KeptUntil: until}, nil
}

// keepFits refuses to keep an undo when the box holds its limit already: a
// kept undo is an ordinary kept snapshot and counts in the limit.
func (s *Keeps) keepFits(ctx context.Context, q db.DBTX, c snapshots.Caller, b *snapshots.Box, sn *snapshots.Snapshot, perBox int) error {
	if !sn.IsUndo() {
		return nil
	}
	all, err := s.k.SnapshotsOfBox(ctx, q, b.ID)
	if err != nil {
		return err
	}
	count := snapshots.CountTowardLimit(all)
	if count < perBox {
		return nil
	}
	var names []string
	hidden := 0
	for _, o := range all {
		if o.IsUndo() || o.State == snapshots.StateFailed || o.State == snapshots.StateDeleting {
			continue
		}
		if snapshots.MayAct(c, snapshots.ActSee, b, o) == nil {
			names = append(names, "‘"+o.Name+"’")
		} else {
			hidden++
		}
	}
	return refusal(snapshots.CodeLimit, keptUndoCountsWords(b.Name, count, perBox, snapshots.DeleteWords(names, hidden)))
}
