package sweeps

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// CheckInterval is how often the automatic check looks by default: a third
// of the shortest backend cadence (the local and Docker backends' 15
// seconds), so a box whose cadence has passed waits at most that long more.
// How often it looks decides nothing else: each box is asked, and gets an
// automatic snapshot, at its own cadence (checkDue).
const CheckInterval = 5 * time.Second

// AutomaticReport says what one automatic check did.
type AutomaticReport struct {
	Checked int      // boxes asked whether they changed
	Taken   []string // snapshots admitted
	Ops     []string // their operations
	Walked  int      // checks that read a box's folder
}

// CheckAutomatic is automatic history's check, run by a
// periodic River job: it asks each box with automatic snapshots on, at its
// backend's cadence, whether it runs and changed since its last snapshot,
// and takes an automatic snapshot only if it did; where the backend cannot
// tell (unknown), it takes one once the cadence has passed since the box's
// last snapshot; and it takes one more when it finds a box stopped that it
// last saw running. A box gets at most one automatic snapshot per cadence,
// counted from its newest automatic snapshot's recorded time, whichever
// process took it and however often the job runs. A box with an operation
// running or waiting is left for the next check, and a box another host
// owns is left to that host's own run of the check.
func (s *Sweeps) CheckAutomatic(ctx context.Context) (AutomaticReport, error) {
	var rep AutomaticReport
	st, err := s.k.Settings(ctx)
	if err != nil {
		return rep, err
	}
	busyList, err := s.st.HistoryBusyBoxes(ctx, s.st.Pool)
	if err != nil {
		return rep, fmt.Errorf("automatic check: %w", err)
	}
	busy := make(map[string]bool, len(busyList))
	for _, id := range busyList {
		if id != nil {
			busy[*id] = true
		}
	}
	elsewhere, err := s.ownedElsewhere(ctx)
	if err != nil {
		return rep, fmt.Errorf("automatic check: %w", err)
	}
	boxes, err := s.st.HistoryBoxes(ctx, s.st.Pool)
	if err != nil {
		return rep, fmt.Errorf("automatic check: %w", err)
	}
	now := s.now()
	var errs []error
	for _, b := range boxes {
		be, ok := s.backends[b.BackendID]
		if !ok || busy[b.ID] || elsewhere[b.ID] || ctx.Err() != nil {
			continue
		}
		on := st.AutomaticOn(be)
		if b.Automatic != nil {
			on = *b.Automatic
		}
		if !on {
			continue
		}
		every := st.CheckEvery(be)
		if !checkDue(b, every, now) {
			continue
		}
		guest := providers.Guest{Backend: b.BackendID, Kind: b.Kind, Host: b.Host, Ref: b.GuestRef, Generation: b.Generation}
		ch, err := be.Snap.Changes(ctx, guest)
		if err != nil {
			s.logger.Debug("automatic check: the backend did not answer", "box", b.ID, "err", err)
			continue
		}
		rep.Checked++
		if ch.Walked {
			rep.Walked++
		}
		if !ch.Exists {
			continue
		}
		stopped := b.Running && !ch.Running
		// What the check saw, and when it asked: the next ask waits a
		// cadence from now, in every process.
		if err := s.st.HistorySetRunning(ctx, s.st.Pool, db.HistorySetRunningParams{BoxID: b.ID, Running: ch.Running, CheckedAt: &now}); err != nil {
			errs = append(errs, fmt.Errorf("automatic check of %s: %w", b.ID, err))
			continue
		}
		why := ""
		switch {
		case stopped && ch.Changed != providers.ChangedNo:
			why = whyBoxStopped
		case !ch.Running:
		case ch.Changed == providers.ChangedYes:
			why = whyBoxChanged
		case ch.Changed == providers.ChangedUnknown:
			last, err := s.st.HistoryLastTake(ctx, s.st.Pool, b.ID)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				errs = append(errs, fmt.Errorf("automatic check of %s: %w", b.ID, err))
				continue
			}
			if err != nil || now.Sub(last) >= every {
				why = whyCannotTell
			}
		}
		if why == "" {
			continue
		}
		op, sn, err := s.taker.TakeAutomatic(ctx, b.ID, why)
		if err != nil {
			var r *snapshots.Refusal
			if errors.As(err, &r) {
				s.logger.Info("automatic snapshot not taken", "box", b.ID, "why", r.Words)
				continue
			}
			errs = append(errs, err)
			continue
		}
		rep.Taken = append(rep.Taken, sn.ID)
		rep.Ops = append(rep.Ops, op.ID)
	}
	return rep, errors.Join(errs...)
}

// checkDue says whether a box is due a check at its cadence, from what the
// database records: its newest automatic snapshot was taken at least every
// ago (so no two are closer than its cadence), and the check last asked it
// at least most of every ago (a quarter of slack, for a look that comes a
// moment early), so a box that did not change is asked about once per
// cadence too, not at every look.
func checkDue(b db.HistoryBoxesRow, every time.Duration, now time.Time) bool {
	if now.Sub(b.LastAutomatic) < every {
		return false
	}
	return b.CheckedAt == nil || now.Sub(*b.CheckedAt) >= every-every/4
}
