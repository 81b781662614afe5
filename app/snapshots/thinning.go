package snapshots

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/store"
)

// ThinItem is one automatic snapshot as thinning sees it.
type ThinItem struct {
	ID      string
	TakenAt time.Time
	// Spare marks one thinning never drops: an operation uses it, it is
	// kept, it is the box's head (the state its files descend from, such
	// as a restore's target).
	Spare bool
}

// Thin is thinning's rule (issue 16, item 2; moatbox-snapshots.md,
// "Automatic history"), a pure function of a box's automatic snapshots and
// the clock: it keeps every one of the last 10 minutes, the first of each
// minute for the last hour, the first of each hour for the last day, the
// first of each day (in tz) up to days, and drops the rest and any older.
// When that drops nothing and the box's snapshots hold more than maxBytes,
// it drops the oldest automatic one, never the newest. It answers the IDs to
// drop, oldest first; applied again to what it keeps, it drops nothing more.
func Thin(items []ThinItem, now time.Time, tz *time.Location, days int, heldBytes, maxBytes int64) []string {
	sorted := append([]ThinItem(nil), items...)
	sort.Slice(sorted, func(i, j int) bool {
		if !sorted[i].TakenAt.Equal(sorted[j].TakenAt) {
			return sorted[i].TakenAt.Before(sorted[j].TakenAt)
		}
		return sorted[i].ID < sorted[j].ID
	})
	retention := time.Duration(days) * 24 * time.Hour
	seen := map[string]bool{}
	var drop []string
	for _, it := range sorted {
		age := now.Sub(it.TakenAt)
		var key string
		switch {
		case age > retention:
			if !it.Spare {
				drop = append(drop, it.ID)
			}
			continue
		case age <= ThinAllFor:
			continue
		case age <= ThinMinutelyFor:
			key = "m" + it.TakenAt.In(tz).Format("2006-01-02 15:04")
		case age <= ThinHourlyFor:
			key = "h" + it.TakenAt.In(tz).Format("2006-01-02 15")
		default:
			key = "d" + it.TakenAt.In(tz).Format("2006-01-02")
		}
		if seen[key] && !it.Spare {
			drop = append(drop, it.ID)
			continue
		}
		seen[key] = true
	}
	if len(drop) > 0 || heldBytes <= maxBytes || len(sorted) < 2 {
		return drop
	}
	// The size rule: the oldest that may go, never the newest.
	for _, it := range sorted[:len(sorted)-1] {
		if !it.Spare {
			return []string{it.ID}
		}
	}
	return nil
}

// ThinReport says what one thinning admitted.
type ThinReport struct {
	Boxes      int // boxes with automatic snapshots looked at
	Operations int // thinning operations admitted
	Snapshots  int // snapshots they delete
}

// ThinHistory is thinning, run by a periodic River job: for each box with
// automatic snapshots it applies Thin and admits one operation that deletes
// what Thin drops, each asked of eligible again when it goes. It is
// idempotent: what an admitted operation deletes is pinned by it, so a
// second run before it ends admits nothing for those.
func (s *Sweeps) ThinHistory(ctx context.Context) (ThinReport, error) {
	var rep ThinReport
	st, err := s.Settings(ctx)
	if err != nil {
		return rep, err
	}
	ids, err := s.st.HistoryBoxesToThin(ctx, s.st.Pool)
	if err != nil {
		return rep, fmt.Errorf("thinning: %w", err)
	}
	tz := s.TimeZone(ctx)
	var errs []error
	for _, id := range ids {
		b, err := s.BoxByID(ctx, s.st.Pool, id)
		if err != nil {
			continue
		}
		rep.Boxes++
		hist, err := s.boxes.BoxHistory(ctx, b)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		maxBytes := hist.LimitGiB << 30
		held, err := s.st.HistoryHeldBytes(ctx, s.st.Pool, b.ID)
		if err != nil {
			errs = append(errs, fmt.Errorf("thinning %s: %w", b.Name, err))
			continue
		}
		now := s.now()
		op, err := s.AdmitThin(ctx, System("thinning"), b, OpThin, ChangeThin, "", func(all []*Snapshot, pins map[string][]Pin, head *string) []string {
			var items []ThinItem
			for _, sn := range all {
				if !sn.Automatic || sn.State == StateFailed || sn.State == StateDeleting {
					continue
				}
				spare := Eligible(sn, ChangeThin, pins[sn.ID], now, tz) != nil || (head != nil && *head == sn.ID)
				items = append(items, ThinItem{ID: sn.ID, TakenAt: sn.TakenAt, Spare: spare})
			}
			return Thin(items, now, tz, st.HistoryDays, held, maxBytes)
		})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if op != nil {
			rep.Operations++
			rep.Snapshots += len(op.Snapshots)
		}
	}
	return rep, errors.Join(errs...)
}

// thinParams are a thinning's or a Delete history's parameters.
type thinParams struct {
	Change Change `json:"change"`
}

// ThinResult is what a finished thinning or Delete history answers.
type ThinResult struct {
	Deleted []string `json:"deleted"`
	Spared  []string `json:"spared,omitempty"`
}

// admitThin admits one operation of kind that deletes the snapshots choose
// picks from the box's, with the box's row locked and each one's pins read;
// none picked admits nothing (nil).
func (s *Sweeps) AdmitThin(ctx context.Context, c Caller, b *Box, kind string, change Change, requestID string,
	choose func(all []*Snapshot, pins map[string][]Pin, head *string) []string) (*Operation, error) {
	var op *Operation
	err := store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		b, err := s.LockBox(ctx, tx, b.ID)
		if err != nil {
			return err
		}
		all, err := s.snapshotsOfBox(ctx, tx, b.ID)
		if err != nil {
			return err
		}
		pins, err := s.AllPins(ctx, tx)
		if err != nil {
			return err
		}
		ids := choose(all, pins, b.HeadID)
		if len(ids) == 0 {
			return nil
		}
		op, err = s.Admit(ctx, tx, OpRequest{Kind: kind, Box: b, Pins: ids, Caller: c, RequestID: requestID,
			Params: thinParams{Change: change}})
		return err
	})
	if err != nil {
		return nil, err
	}
	return op, nil
}

// runThin runs a thinning or a Delete history: each snapshot it pinned is
// asked of eligible again now and deleted, one at a time; one that may not
// go now is spared and named in the result.
func (s *Sweeps) runThin(ctx context.Context, op *Operation, params thinParams) (ThinResult, error) {
	if params.Change == "" {
		params.Change = ChangeThin
	}
	caller := CallerOf(op)
	why := "thinned by automatic history"
	if op.Kind == OpDeleteHistory {
		why = ByWhy(caller) + ", deleting the box's history"
	}
	var res ThinResult
	for _, id := range op.Snapshots {
		sn, err := s.SnapshotByID(ctx, s.st.Pool, id)
		if errors.Is(err, store.ErrNotFound) {
			// Gone already: this operation deleted it before its job
			// snoozed or its worker stopped (it pinned it, so no other
			// deleted it).
			if op.Resuming {
				res.Deleted = append(res.Deleted, id)
			}
			continue
		}
		if err != nil {
			return ThinResult{}, err
		}
		if sn.State != StateDeleting {
			pins, err := s.Pins(ctx, s.st.Pool, sn.ID, op.ID)
			if err != nil {
				return ThinResult{}, err
			}
			if err := Eligible(sn, params.Change, pins, s.now(), s.TimeZone(ctx)); err != nil || !sn.Automatic || sn.Kept() {
				res.Spared = append(res.Spared, sn.ID)
				continue
			}
		}
		b, err := s.BoxByID(ctx, s.st.Pool, sn.BoxID)
		if err != nil {
			return ThinResult{}, err
		}
		be, err := s.Backend(sn.BackendID)
		if err != nil {
			return ThinResult{}, s.Finish(ctx, op, OpFailed, res, err.Error(), "")
		}
		// Each delete's provider task is waited for by the job's snooze:
		// the run resumes here, counts the ones gone as deleted, and
		// deletes the one still deleting again (gone already: its record
		// goes).
		if err := s.snaps.DeleteWith(ctx, op, sn, b, be, caller, why, s.snaps.TaskRecorder(op)); err != nil {
			if operations.Pending(err) {
				return ThinResult{}, err
			}
			return ThinResult{}, s.Finish(ctx, op, OpFailed, res, TaskFailedWords(op, err.Error()), "")
		}
		op.TaskEnded = nil // the task waited for was this delete's: the next snooze on their own
		res.Deleted = append(res.Deleted, sn.ID)
	}
	if op.BoxID != nil && len(res.Deleted) > 0 {
		kind := EvHistoryThinned
		if op.Kind == OpDeleteHistory {
			kind = EvHistoryDeleted
		}
		s.Log(ctx, s.st.Pool, *op.BoxID, kind, caller, logThinnedWords(len(res.Deleted), why), "", op.ID, nil)
	}
	return res, nil
}
