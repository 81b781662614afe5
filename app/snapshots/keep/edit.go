package keep

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
)

// Rename renames a snapshot: the person only, a name unique on its box, and
// eligible at the moment (a restore's target is refused and named).
func (s *Keeps) Rename(ctx context.Context, c snapshots.Caller, boxRef, ref, name string) (*snapshots.Snapshot, error) {
	name, err := snapshots.CleanName(name)
	if err != nil {
		return nil, err
	}
	return s.edit(ctx, c, boxRef, ref, snapshots.ActRename, snapshots.ChangeRename, func(tx pgx.Tx, sn *snapshots.Snapshot) error {
		if sn.Name == name {
			return nil
		}
		taken, err := s.k.NamesOfBox(ctx, tx, sn.BoxID)
		if err != nil {
			return err
		}
		if taken[name] {
			return refusal(snapshots.CodeConflict, namedAlreadyWords(sn.BoxName, name))
		}
		return s.st.CoreSnapshotRename(ctx, tx, db.CoreSnapshotRenameParams{ID: sn.ID, Name: name})
	})
}

// SetNote sets or clears a snapshot's note (at most 1 KB).
func (s *Keeps) SetNote(ctx context.Context, c snapshots.Caller, boxRef, ref, note string) (*snapshots.Snapshot, error) {
	n, err := snapshots.CleanNote(note)
	if err != nil {
		return nil, err
	}
	return s.edit(ctx, c, boxRef, ref, snapshots.ActNote, snapshots.ChangeNote, func(tx pgx.Tx, sn *snapshots.Snapshot) error {
		return s.st.CoreSnapshotNote(ctx, tx, db.CoreSnapshotNoteParams{ID: sn.ID, Note: n})
	})
}

func (s *Keeps) edit(ctx context.Context, c snapshots.Caller, boxRef, ref string, act snapshots.Action, change snapshots.Change, fn func(pgx.Tx, *snapshots.Snapshot) error) (*snapshots.Snapshot, error) {
	sn, b, err := s.k.SnapshotOfBox(ctx, c, boxRef, ref)
	if err != nil {
		return nil, err
	}
	if err := snapshots.MayAct(c, act, b, sn); err != nil {
		return nil, err
	}
	err = store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		_, sn, err = s.k.ChangeNow(ctx, tx, b.ID, sn.ID, ref, change)
		if err != nil {
			return err
		}
		if err := fn(tx, sn); err != nil {
			return err
		}
		// The pages that show the box follow the edit at its commit.
		return s.ops.BoxChanged(ctx, tx, b.ID)
	})
	if err != nil {
		return nil, err
	}
	sn, _, err = s.k.Snapshot(ctx, c, sn.ID)
	return sn, err
}
