package heads

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
)

// EvHeadSet is the box log's event of a head chosen without a restore.
const EvHeadSet = "head-set"

// ChooseHead puts a box's head on one of its snapshots without a restore:
// nothing in the box changes, and its next snapshot is taken from the one
// chosen. The person may choose any ready snapshot of the box, and an
// agent any its thread sees; a snapshot the caller may not see reads as
// not found. Choosing the head it has already changes nothing.
func (s *Heads) ChooseHead(ctx context.Context, c snapshots.Caller, boxRef, ref string) (*snapshots.Snapshot, error) {
	sn, b, err := s.snaps.SnapshotOfBox(ctx, c, boxRef, ref)
	if err != nil {
		return nil, err
	}
	if err := snapshots.MayAct(c, snapshots.ActHead, b, sn); err != nil {
		return nil, err
	}
	err = store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		b, err := s.k.LockBox(ctx, tx, b.ID)
		if err != nil {
			return err
		}
		sn, err := s.k.SnapshotLock(ctx, tx, sn.ID)
		if err != nil || sn.BoxID != b.ID {
			return snapshots.SnapshotNotFound(ref)
		}
		if sn.State != snapshots.StateReady {
			return refusal(snapshots.CodePlan, headNotReadyWords(sn.Name, snapshots.StateWords(sn.State)))
		}
		if b.HeadID != nil && *b.HeadID == sn.ID {
			return nil
		}
		if err := s.st.LookHeadSet(ctx, tx, db.LookHeadSetParams{ID: b.ID, HeadID: &sn.ID}); err != nil {
			return fmt.Errorf("set the head of %s: %w", b.Name, err)
		}
		s.k.Log(ctx, tx, b.ID, EvHeadSet, c, logHeadSetWords(sn.Name, sn.ID), sn.ID, "", nil)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sn, _, err = s.snaps.Snapshot(ctx, c, sn.ID)
	return sn, err
}
