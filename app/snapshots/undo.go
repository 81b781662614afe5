package snapshots

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// TakeUndo takes a restore's or a reset's undo, named "before the restore
// at 11:02", or finds the one a restart cut short.
func (s *Service) TakeUndo(ctx context.Context, op *Operation, b *Box, be Backend, resuming bool) (*Snapshot, error) {
	undo, err := s.RecordUndo(ctx, op, b, be)
	if err != nil || undo.State == StateReady {
		return undo, err
	}
	start := s.now()
	var taken providers.SnapshotTaken
	found := false
	if resuming {
		if held, ok, err := s.FindHeld(ctx, be, undo.ID); err == nil && ok && !held.Incomplete {
			taken = providers.SnapshotTaken{Ref: held.Ref.Ref, Storage: held.Storage, CapturedAt: held.TakenAt, Holds: held.Holds,
				Size: held.Size, ResetVersion: held.Label.ResetVersion}
			found = true
		}
	}
	if !found {
		var err error
		// As a take's: the job snoozes on the task, and the resumed run
		// finds the undo by its label.
		settings, _ := s.ReadSettings(ctx)
		taken, err = be.Snap.Snapshot(ctx, GuestOf(b), providers.SnapshotTake{Label: providers.Label{Install: s.install, Box: b.ID, Snapshot: undo.ID},
			RoomPercent: settings.RoomPercent}, s.TaskRecorder(op))
		if operations.Pending(err) {
			return nil, err
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			state := StateFailed
			if errors.Is(err, providers.ErrIncomplete) {
				state = StateIncomplete
			}
			_ = s.MoveState(ctx, s.st.Pool, undo, state, err.Error())
			return nil, err
		}
	}
	if err := s.MarkTaken(ctx, undo, taken, s.now().Sub(start), &TakenEvent{Caller: undoCallerOf(op), Op: op.ID,
		Words: logUndoTakenWords(undo.Name, undo.ID, undoWordsOf(op), HoldsWords(undo.Holds, undo.Scope))}); err != nil {
		return nil, err
	}
	// The undo as recorded, with the backend's reference the take gave (a
	// backend that names a snapshot by its own reference reads it by that).
	if u, err := s.SnapshotByID(ctx, s.st.Pool, undo.ID); err == nil {
		return u, nil
	}
	undo.State = StateReady
	return undo, nil
}

// RecordUndo records a restore's undo before it is taken, named "before the
// restore at 11:02" (a reset's "before the reset at 11:02"; a release's
// final snapshot, which is no undo, "at the release at 11:02"), or reads the
// one a restart cut short. An undo already
// ready is answered as it is; one neither taking nor ready is an error.
func (s *Service) RecordUndo(ctx context.Context, op *Operation, b *Box, be Backend) (*Snapshot, error) {
	caller := undoCallerOf(op)
	var undo *Snapshot
	if op.UndoID == nil {
		tz := s.TimeZone(ctx)
		err := store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
			taken, err := s.NamesOfBox(ctx, tx, b.ID)
			if err != nil {
				return err
			}
			name := UniqueTimedName(undoNameOf(op, tz), op.CreatedAt, tz, taken)
			owner, ownerThread := OwnerOf(b)
			snapping := be.Snap.Snapshotting(b.Kind)
			excludes := ""
			scope := "box"
			if snapping != nil {
				excludes, scope = snapping.Excludes, string(snapping.Scope)
			}
			id := NewID(PrefixSnapshot)
			undo, err = SnapshotRow(s.st.CoreSnapshotInsert(ctx, tx, db.CoreSnapshotInsertParams{ID: id, BoxID: b.ID,
				BoxName: b.Name, BoxKind: b.Kind, BoxSystem: b.System, BoxThreadID: b.ThreadID, BackendID: b.BackendID,
				Host: b.Host, GuestGeneration: b.Generation, Name: name, TakenAt: s.now(), ByKind: caller.ByKind(),
				ByThreadID: caller.thread(), ByWhy: NilIfEmpty(caller.Why), Scope: scope, Holds: string(providers.HoldsDisk),
				Excludes: NilIfEmpty(excludes), OwnerKind: owner, OwnerThreadID: ownerThread, State: StateTaking,
				Picture: "none", UndoOf: undoOfOp(op)}))
			if err != nil {
				return err
			}
			if err := s.RecordPrice(ctx, tx, undo, snapping); err != nil {
				return err
			}
			if err := s.st.CoreOpSetUndo(ctx, tx, db.CoreOpSetUndoParams{ID: op.ID, UndoID: id}); err != nil {
				return err
			}
			op.UndoID = &id
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("record the undo: %w", err)
		}
	} else {
		u, err := s.SnapshotByID(ctx, s.st.Pool, *op.UndoID)
		if err != nil {
			return nil, fmt.Errorf("the undo's record is gone")
		}
		undo = u
		if undo.State == StateReady {
			return undo, nil
		}
		if undo.State != StateTaking {
			return nil, fmt.Errorf("the undo is %s", StateWords(undo.State))
		}
	}
	return undo, nil
}
