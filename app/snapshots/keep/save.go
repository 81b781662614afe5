package keep

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
)

// Save makes an automatic snapshot an ordinary one, with a new name if
// given (moatbox's "Save with a name"): it then counts in the per-box limit
// and thinning leaves it. The caller must be able to take a snapshot of the
// box; a box at its limit refuses, naming what to delete.
func (s *Keeps) Save(ctx context.Context, c snapshots.Caller, boxRef, ref, name string) (*snapshots.Snapshot, error) {
	var newName *string
	if strings.TrimSpace(name) != "" {
		n, err := snapshots.CleanName(name)
		if err != nil {
			return nil, err
		}
		newName = &n
	}
	sn, b, err := s.k.SnapshotOfBox(ctx, c, boxRef, ref)
	if err != nil {
		return nil, err
	}
	if err := snapshots.MayAct(c, snapshots.ActTake, b, nil); err != nil {
		return nil, err
	}
	st, err := s.k.Settings(ctx)
	if err != nil {
		return nil, err
	}
	err = store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		b, sn, err = s.k.ChangeNow(ctx, tx, b.ID, sn.ID, ref, snapshots.ChangeRename)
		if err != nil {
			return err
		}
		if !sn.Automatic {
			return refusal(snapshots.CodeConflict, snapshots.SavedAlreadyWords(sn.Name))
		}
		if newName != nil && *newName != sn.Name {
			taken, err := s.k.NamesOfBox(ctx, tx, sn.BoxID)
			if err != nil {
				return err
			}
			if taken[*newName] {
				return refusal(snapshots.CodeConflict, namedAlreadyWords(sn.BoxName, *newName))
			}
		}
		all, err := s.k.SnapshotsOfBox(ctx, tx, b.ID)
		if err != nil {
			return err
		}
		if count := snapshots.CountTowardLimit(all); count >= st.PerBox {
			var names []string
			hidden := 0
			for _, o := range all {
				if o.IsUndo() || o.Automatic || o.State == snapshots.StateFailed || o.State == snapshots.StateDeleting {
					continue
				}
				if snapshots.MayAct(c, snapshots.ActSee, b, o) == nil {
					names = append(names, "‘"+o.Name+"’")
				} else {
					hidden++
				}
			}
			return refusal(snapshots.CodeLimit, savingPassesWords(b.Name, count, st.PerBox, sn.Name, snapshots.DeleteWords(names, hidden)))
		}
		if err := s.st.HistorySetAutomatic(ctx, tx, db.HistorySetAutomaticParams{ID: sn.ID, Automatic: false, NewName: newName}); err != nil {
			return fmt.Errorf("save %s: %w", sn.ID, err)
		}
		shown := sn.Name
		if newName != nil {
			shown = *newName
		}
		s.k.Log(ctx, tx, b.ID, snapshots.EvSnapshotSaved, c, logSavedWords(shown, sn.ID), sn.ID, "", nil)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sn, _, err = s.k.Snapshot(ctx, c, sn.ID)
	return sn, err
}

// Unsave makes a saved snapshot automatic again: from then on thinning
// treats it as any other automatic one. An undo stays an undo, and a kept
// one stays kept (and so spared) until its keep ends.
func (s *Keeps) Unsave(ctx context.Context, c snapshots.Caller, boxRef, ref string) (*snapshots.Snapshot, error) {
	sn, b, err := s.k.SnapshotOfBox(ctx, c, boxRef, ref)
	if err != nil {
		return nil, err
	}
	if err := snapshots.MayAct(c, snapshots.ActDelete, b, sn); err != nil {
		return nil, err
	}
	err = store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		b, sn, err = s.k.ChangeNow(ctx, tx, b.ID, sn.ID, ref, snapshots.ChangeRename)
		if err != nil {
			return err
		}
		if sn.Automatic {
			return refusal(snapshots.CodeConflict, snapshots.AutomaticAlreadyWords(sn.Name))
		}
		if sn.UndoOf != nil {
			return refusal(snapshots.CodeConflict, undoNeverAutomaticWords(sn.Name))
		}
		if err := s.st.HistorySetAutomatic(ctx, tx, db.HistorySetAutomaticParams{ID: sn.ID, Automatic: true}); err != nil {
			return fmt.Errorf("unsave %s: %w", sn.ID, err)
		}
		s.k.Log(ctx, tx, b.ID, snapshots.EvSnapshotUnsaved, c, logSavedWords(sn.Name, sn.ID), sn.ID, "", nil)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sn, _, err = s.k.Snapshot(ctx, c, sn.ID)
	return sn, err
}
