package take

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// AutomaticName is an automatic snapshot's name: the time to the second in
// the owner's time zone, "Thu 10:42:07".
func AutomaticName(t time.Time, tz *time.Location) string {
	return t.In(tz).Format("Mon 15:04:05")
}

// TakeAutomatic admits an automatic snapshot of a box, taken by boxsnap
// (why says what made it): not counted in the per-box limit, never an
// undo, refused only by the plan, the room rule and the ceiling.
func (s *Take) TakeAutomatic(ctx context.Context, boxID, why string) (*snapshots.Operation, *snapshots.Snapshot, error) {
	c := snapshots.System(why)
	b, err := s.k.BoxByID(ctx, s.st.Pool, boxID)
	if err != nil {
		return nil, nil, err
	}
	be, err := s.k.Backend(b.BackendID)
	if err != nil {
		return nil, nil, err
	}
	snapping := be.Snap.Snapshotting(b.Kind)
	if snapping == nil {
		return nil, nil, refusal(snapshots.CodePlan, snapshots.NoSnapshotsWords(be.Label))
	}
	settings, err := s.k.Settings(ctx)
	if err != nil {
		return nil, nil, err
	}
	plan, err := s.k.PlanNow(ctx, b, be, nil)
	if err != nil {
		return nil, nil, s.k.PlanError(b, be, err)
	}
	if err := s.takeAllowed(ctx, c, b, be, plan, settings); err != nil {
		return nil, nil, err
	}
	tz := s.k.TimeZone(ctx)
	now := s.now()
	var sn *snapshots.Snapshot
	var op *snapshots.Operation
	err = store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		b, err = s.k.LockBox(ctx, tx, b.ID)
		if err != nil {
			return err
		}
		if b.State != snapshots.BoxReady {
			return refusal(snapshots.CodeBusy, releasedTakesNoneWords(b.Name))
		}
		if err := s.k.Unsettled(ctx, tx, b); err != nil {
			return err
		}
		taken, err := s.k.NamesOfBox(ctx, tx, b.ID)
		if err != nil {
			return err
		}
		name := snapshots.UniqueName(AutomaticName(now, tz), taken)
		owner, ownerThread := snapshots.OwnerOf(b)
		sn, err = snapshots.SnapshotRow(s.st.CoreSnapshotInsert(ctx, tx, db.CoreSnapshotInsertParams{ID: snapshots.NewID(snapshots.PrefixSnapshot),
			BoxID: b.ID, BoxName: b.Name, BoxKind: b.Kind, BoxSystem: b.System, BoxThreadID: b.ThreadID,
			BackendID: b.BackendID, Host: b.Host, Storage: plan.Storage.Name, StorageType: plan.Storage.Type,
			GuestGeneration: b.Generation, Name: name, TakenAt: now, ByKind: c.ByKind(), ByThreadID: threadOf(c),
			ByWhy: snapshots.NilIfEmpty(c.Why), Scope: string(snapping.Scope), Holds: string(providers.HoldsDisk),
			Excludes: snapshots.NilIfEmpty(snapping.Excludes), OwnerKind: owner, OwnerThreadID: ownerThread, State: snapshots.StateTaking,
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
		reserved, err := s.k.ReserveRoom(ctx, tx, c, b, be, plan, settings, plan.Take.AddsBytes)
		if err != nil {
			return err
		}
		op, err = s.k.Admit(ctx, tx, snapshots.OpRequest{Kind: snapshots.OpTake, Box: b, Target: sn, Pins: []string{sn.ID}, Caller: c,
			Params: takeParams{}, Reserved: reserved})
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return op, sn, nil
}
