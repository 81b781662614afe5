package snapshots

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
)

// Rename renames a snapshot: the person only, a name unique on its box, and
// eligible at the moment (a restore's target is refused and named).
func (s *Service) Rename(ctx context.Context, c Caller, boxRef, ref, name string) (*Snapshot, error) {
	name, err := CleanName(name)
	if err != nil {
		return nil, err
	}
	return s.edit(ctx, c, boxRef, ref, ActRename, ChangeRename, func(tx pgx.Tx, sn *Snapshot) error {
		if sn.Name == name {
			return nil
		}
		taken, err := s.NamesOfBox(ctx, tx, sn.BoxID)
		if err != nil {
			return err
		}
		if taken[name] {
			return refusal(CodeConflict, namedAlreadyWords(sn.BoxName, name))
		}
		return s.st.CoreSnapshotRename(ctx, tx, db.CoreSnapshotRenameParams{ID: sn.ID, Name: name})
	})
}

// SetNote sets or clears a snapshot's note (at most 1 KB).
func (s *Service) SetNote(ctx context.Context, c Caller, boxRef, ref, note string) (*Snapshot, error) {
	n, err := CleanNote(note)
	if err != nil {
		return nil, err
	}
	return s.edit(ctx, c, boxRef, ref, ActNote, ChangeNote, func(tx pgx.Tx, sn *Snapshot) error {
		return s.st.CoreSnapshotNote(ctx, tx, db.CoreSnapshotNoteParams{ID: sn.ID, Note: n})
	})
}

func (s *Service) edit(ctx context.Context, c Caller, boxRef, ref string, act Action, change Change, fn func(pgx.Tx, *Snapshot) error) (*Snapshot, error) {
	sn, b, err := s.SnapshotOfBox(ctx, c, boxRef, ref)
	if err != nil {
		return nil, err
	}
	if err := MayAct(c, act, b, sn); err != nil {
		return nil, err
	}
	err = store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		_, sn, err = s.ChangeNow(ctx, tx, b.ID, sn.ID, ref, change)
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
	sn, _, err = s.Snapshot(ctx, c, sn.ID)
	return sn, err
}
