package contents

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
)

// importTip is a batch's one provably newest snapshot, among those this
// import recorded: the one snapshot of the batch that no other of the
// batch was taken from. Every other snapshot of the batch is then its
// ancestor. A batch with competing tips has none, and neither the order of
// the batch nor when each was taken chooses one. parents maps each
// snapshot of the batch to what it was taken from.
func importTip(made []*snapshots.Snapshot, parents map[string]string) *snapshots.Snapshot {
	isParent := map[string]bool{}
	for _, p := range parents {
		isParent[p] = true
	}
	tip := ""
	for id := range parents {
		if isParent[id] {
			continue
		}
		if tip != "" {
			return nil // competing tips: someone chooses
		}
		tip = id
	}
	for _, sn := range made {
		if sn.ID == tip {
			return sn
		}
	}
	return nil // the tip was here already: nothing new to move to
}

// advanceHead moves the head of a box that was here before the import to
// the batch's one tip when it is a known descendant of the head: its
// recorded ancestry leads back to the head. A box with neither a head nor
// a snapshot before the import gets the tip as its head. Anything else (the
// head again or older, a sibling, unrelated history, ancestry with a gap,
// competing tips) keeps the head, and the import still succeeds.
func (s *Contents) advanceHead(ctx context.Context, box string, made []*snapshots.Snapshot, parents map[string]string) error {
	tip := importTip(made, parents)
	if tip == nil {
		return nil
	}
	return store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		b, err := s.k.LockBox(ctx, tx, box)
		if err != nil {
			return err
		}
		if b.HeadID == nil {
			all, err := s.k.SnapshotsOfBox(ctx, tx, b.ID)
			if err != nil {
				return err
			}
			isNew := map[string]bool{}
			for _, sn := range made {
				isNew[sn.ID] = true
			}
			for _, sn := range all {
				if !isNew[sn.ID] {
					return nil // a box with history and no head: someone chooses
				}
			}
			s.snaps.SetHead(ctx, tx, b.ID, tip.ID)
			return nil
		}
		chain, err := s.st.LookLineage(ctx, tx, db.LookLineageParams{ID: tip.ID, MaxDepth: snapshots.MaxLineage})
		if err != nil {
			return fmt.Errorf("read the lineage of %s: %w", tip.ID, err)
		}
		for _, sn := range chain[min(1, len(chain)):] {
			if sn.ID == *b.HeadID {
				s.snaps.SetHead(ctx, tx, b.ID, tip.ID)
				return nil
			}
		}
		return nil
	})
}
