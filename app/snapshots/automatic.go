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

// AutomaticName is an automatic snapshot's name: the time to the second in
// the owner's time zone, "Thu 10:42:07".
func AutomaticName(t time.Time, tz *time.Location) string {
	return t.In(tz).Format("Mon 15:04:05")
}

// CheckAutomatic is the automatic check (issue 16, item 1), run by a
// periodic River job: it asks each box with automatic snapshots on, at its
// backend's cadence, whether it runs and changed since its last snapshot,
// and takes an automatic snapshot only if it did; where the backend cannot
// tell (unknown), it takes one once the cadence has passed since the box's
// last snapshot; and it takes one more when it finds a box stopped that it
// last saw running. A box gets at most one automatic snapshot per cadence,
// counted from its newest automatic snapshot's recorded time, whichever
// process took it and however often the job runs. A box with an operation
// running or waiting is left for the next check.
func (s *Sweeps) CheckAutomatic(ctx context.Context) (AutomaticReport, error) {
	var rep AutomaticReport
	st, err := s.Settings(ctx)
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
	boxes, err := s.st.HistoryBoxes(ctx, s.st.Pool)
	if err != nil {
		return rep, fmt.Errorf("automatic check: %w", err)
	}
	now := s.now()
	var errs []error
	for _, b := range boxes {
		be, ok := s.backends[b.BackendID]
		if !ok || busy[b.ID] || ctx.Err() != nil {
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
			why = "the box stopped"
		case !ch.Running:
		case ch.Changed == providers.ChangedYes:
			why = "the box changed"
		case ch.Changed == providers.ChangedUnknown:
			last, err := s.st.HistoryLastTake(ctx, s.st.Pool, b.ID)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				errs = append(errs, fmt.Errorf("automatic check of %s: %w", b.ID, err))
				continue
			}
			if err != nil || now.Sub(last) >= every {
				why = "its backend cannot tell whether it changed"
			}
		}
		if why == "" {
			continue
		}
		op, sn, err := s.snaps.TakeAutomatic(ctx, b.ID, why)
		if err != nil {
			var r *Refusal
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

// TakeAutomatic admits an automatic snapshot of a box, taken by boxsnap
// (why says what made it): not counted in the per-box limit, never an
// undo, refused only by the plan, the room rule and the ceiling.
func (s *Service) TakeAutomatic(ctx context.Context, boxID, why string) (*Operation, *Snapshot, error) {
	c := System(why)
	b, err := s.BoxByID(ctx, s.st.Pool, boxID)
	if err != nil {
		return nil, nil, err
	}
	be, err := s.Backend(b.BackendID)
	if err != nil {
		return nil, nil, err
	}
	snapping := be.Snap.Snapshotting(b.Kind)
	if snapping == nil {
		return nil, nil, refusal(CodePlan, NoSnapshotsWords(be.Label))
	}
	settings, err := s.Settings(ctx)
	if err != nil {
		return nil, nil, err
	}
	plan, err := s.planNow(ctx, b, be, nil)
	if err != nil {
		return nil, nil, s.planError(b, be, err)
	}
	if err := s.takeAllowed(ctx, c, b, be, plan, settings); err != nil {
		return nil, nil, err
	}
	tz := s.TimeZone(ctx)
	now := s.now()
	var sn *Snapshot
	var op *Operation
	err = store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		b, err = s.LockBox(ctx, tx, b.ID)
		if err != nil {
			return err
		}
		if b.State != BoxReady {
			return refusal(CodeBusy, wordsReleasedTakesNone(b.Name))
		}
		if err := s.unsettled(ctx, tx, b); err != nil {
			return err
		}
		taken, err := s.NamesOfBox(ctx, tx, b.ID)
		if err != nil {
			return err
		}
		name := UniqueName(AutomaticName(now, tz), taken)
		owner, ownerThread := OwnerOf(b)
		sn, err = SnapshotRow(s.st.CoreSnapshotInsert(ctx, tx, db.CoreSnapshotInsertParams{ID: NewID(PrefixSnapshot),
			BoxID: b.ID, BoxName: b.Name, BoxKind: b.Kind, BoxSystem: b.System, BoxThreadID: b.ThreadID,
			BackendID: b.BackendID, Host: b.Host, Storage: plan.Storage.Name, StorageType: plan.Storage.Type,
			GuestGeneration: b.Generation, Name: name, TakenAt: now, ByKind: c.ByKind(), ByThreadID: c.thread(),
			ByWhy: NilIfEmpty(c.Why), Scope: string(snapping.Scope), Holds: string(providers.HoldsDisk),
			Excludes: NilIfEmpty(snapping.Excludes), OwnerKind: owner, OwnerThreadID: ownerThread, State: StateTaking,
			Picture: pictureState(b, settings)}))
		if err != nil {
			return fmt.Errorf("record automatic snapshot: %w", err)
		}
		if err := s.st.HistoryMarkAutomatic(ctx, tx, sn.ID); err != nil {
			return fmt.Errorf("record automatic snapshot: %w", err)
		}
		sn.Automatic = true
		if err := s.recordPrice(ctx, tx, sn, snapping); err != nil {
			return err
		}
		reserved, err := s.reserveRoom(ctx, tx, c, b, be, plan, settings, plan.Take.AddsBytes)
		if err != nil {
			return err
		}
		op, err = s.Admit(ctx, tx, OpRequest{Kind: OpTake, Box: b, Target: sn, Pins: []string{sn.ID}, Caller: c,
			Params: takeParams{}, Reserved: reserved})
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return op, sn, nil
}
