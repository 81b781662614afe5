package sweeps

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
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

// Thin is automatic history's thinning rule, a pure function of a box's
// automatic snapshots and
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
		case age <= snapshots.ThinAllFor:
			continue
		case age <= snapshots.ThinMinutelyFor:
			key = "m" + it.TakenAt.In(tz).Format("2006-01-02 15:04")
		case age <= snapshots.ThinHourlyFor:
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
	st, err := s.k.Settings(ctx)
	if err != nil {
		return rep, err
	}
	ids, err := s.st.HistoryBoxesToThin(ctx, s.st.Pool)
	if err != nil {
		return rep, fmt.Errorf("thinning: %w", err)
	}
	tz := s.k.TimeZone(ctx)
	var errs []error
	for _, id := range ids {
		b, err := s.k.BoxByID(ctx, s.st.Pool, id)
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
		op, err := s.k.AdmitThin(ctx, snapshots.System(byThinning), b, snapshots.OpThin, snapshots.ChangeThin, "", func(all []*snapshots.Snapshot, pins map[string][]snapshots.Pin, head *string) []string {
			var items []ThinItem
			for _, sn := range all {
				if !sn.Automatic || sn.State == snapshots.StateFailed || sn.State == snapshots.StateDeleting {
					continue
				}
				spare := snapshots.Eligible(sn, snapshots.ChangeThin, pins[sn.ID], now, tz) != nil || (head != nil && *head == sn.ID)
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

// ThinResult is what a finished thinning or Delete history answers.
type ThinResult struct {
	Deleted []string `json:"deleted"`
	Spared  []string `json:"spared,omitempty"`
}

// thinKind is op's kind of the two runThin runs, so a thinning that ends
// itself records its typed result through its own kind.
func (s *Sweeps) thinKind(op *snapshots.Operation) *operations.Kind[snapshots.ThinParams, ThinResult] {
	if op.Kind == snapshots.OpDeleteHistory {
		return s.kinds.DeleteHistory
	}
	return s.kinds.Thin
}

// runThin runs a thinning or a Delete history: each snapshot it pinned is
// asked of eligible again now and deleted, one at a time; one that may not
// go now is spared and named in the result.
func (s *Sweeps) runThin(ctx context.Context, op *snapshots.Operation, params snapshots.ThinParams) (ThinResult, error) {
	if params.Change == "" {
		params.Change = snapshots.ChangeThin
	}
	caller := snapshots.CallerOf(op)
	why := whyThinned
	if op.Kind == snapshots.OpDeleteHistory {
		why = whyDeletingHistoryWords(caller)
	}
	var res ThinResult
	for _, id := range op.Snapshots {
		sn, err := s.k.SnapshotByID(ctx, s.st.Pool, id)
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
		if sn.State != snapshots.StateDeleting {
			pins, err := s.k.Pins(ctx, s.st.Pool, sn.ID, op.ID)
			if err != nil {
				return ThinResult{}, err
			}
			if err := snapshots.Eligible(sn, params.Change, pins, s.now(), s.k.TimeZone(ctx)); err != nil || !sn.Automatic || sn.Kept() {
				res.Spared = append(res.Spared, sn.ID)
				continue
			}
		}
		b, err := s.k.BoxByID(ctx, s.st.Pool, sn.BoxID)
		if err != nil {
			return ThinResult{}, err
		}
		be, err := s.k.Backend(sn.BackendID)
		if err != nil {
			return ThinResult{}, s.thinKind(op).EndWith(ctx, op, snapshots.OpFailed, res, err.Error(), "")
		}
		// Each delete's provider task is waited for by the job's snooze:
		// the run resumes here, counts the ones gone as deleted, and
		// deletes the one still deleting again (gone already: its record
		// goes).
		if err := s.snaps.DeleteWith(ctx, op, sn, b, be, caller, why, s.k.TaskRecorder(op)); err != nil {
			if operations.Pending(err) {
				return ThinResult{}, err
			}
			return ThinResult{}, s.thinKind(op).EndWith(ctx, op, snapshots.OpFailed, res, snapshots.TaskFailedWords(op, err.Error()), "")
		}
		op.TaskEnded = nil // the task waited for was this delete's: the next snooze on their own
		res.Deleted = append(res.Deleted, sn.ID)
	}
	if op.BoxID != nil && len(res.Deleted) > 0 {
		kind := snapshots.EvHistoryThinned
		if op.Kind == snapshots.OpDeleteHistory {
			kind = snapshots.EvHistoryDeleted
		}
		s.k.Log(ctx, s.st.Pool, *op.BoxID, kind, caller, logThinnedWords(len(res.Deleted), why), "", op.ID, nil)
	}
	return res, nil
}
