package take

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// TakeUndo takes a restore's or a reset's undo, named "before the restore
// at 11:02", or finds the one a restart cut short.
func (s *Take) TakeUndo(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, be snapshots.Backend, resuming bool) (*snapshots.Snapshot, error) {
	undo, err := s.RecordUndo(ctx, op, b, be)
	if err != nil || undo.State == snapshots.StateReady {
		return undo, err
	}
	start := s.now()
	var taken providers.SnapshotTaken
	found := false
	if resuming {
		if held, ok, err := s.findHeld(ctx, be, undo.ID); err == nil && ok && !held.Incomplete {
			taken = providers.SnapshotTaken{Ref: held.Ref.Ref, Storage: held.Storage, CapturedAt: held.TakenAt, Holds: held.Holds,
				Size: held.Size, ResetVersion: held.Label.ResetVersion}
			found = true
		}
	}
	if !found {
		var err error
		// As a take's: the job snoozes on the task, and the resumed run
		// finds the undo by its label.
		settings, _ := s.k.ReadSettings(ctx)
		taken, err = be.Snap.Snapshot(ctx, snapshots.GuestOf(b), providers.SnapshotTake{Label: providers.Label{Install: s.install, Box: b.ID, Snapshot: undo.ID},
			RoomPercent: settings.RoomPercent}, s.k.TaskRecorder(op))
		if operations.Pending(err) {
			return nil, err
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			state := snapshots.StateFailed
			if errors.Is(err, providers.ErrIncomplete) {
				state = snapshots.StateIncomplete
			}
			_ = s.k.MoveState(ctx, s.st.Pool, undo, state, err.Error())
			return nil, err
		}
	}
	if err := s.k.MarkTaken(ctx, undo, taken, s.now().Sub(start), &snapshots.TakenEvent{Caller: undoCallerOf(op), Op: op.ID,
		Words: logUndoTakenWords(undo.Name, undo.ID, undoWordsOf(op), snapshots.HoldsWords(undo.Holds, undo.Scope))}); err != nil {
		return nil, err
	}
	// The undo as recorded, with the backend's reference the take gave (a
	// backend that names a snapshot by its own reference reads it by that).
	if u, err := s.k.SnapshotByID(ctx, s.st.Pool, undo.ID); err == nil {
		return u, nil
	}
	undo.State = snapshots.StateReady
	return undo, nil
}

// RecordUndo records a restore's undo before it is taken, named "before the
// restore at 11:02" (a reset's "before the reset at 11:02"; a release's
// final snapshot, which is no undo, "at the release at 11:02"), or reads the
// one a restart cut short. An undo already
// ready is answered as it is; one neither taking nor ready is an error.
func (s *Take) RecordUndo(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, be snapshots.Backend) (*snapshots.Snapshot, error) {
	caller := undoCallerOf(op)
	var undo *snapshots.Snapshot
	if op.UndoID == nil {
		tz := s.k.TimeZone(ctx)
		err := store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
			taken, err := s.k.NamesOfBox(ctx, tx, b.ID)
			if err != nil {
				return err
			}
			name := uniqueTimedName(undoNameOf(op, tz), op.CreatedAt, tz, taken)
			owner, ownerThread := snapshots.OwnerOf(b)
			snapping := be.Snap.Snapshotting(b.Kind)
			excludes := ""
			scope := "box"
			if snapping != nil {
				excludes, scope = snapping.Excludes, string(snapping.Scope)
			}
			id := snapshots.NewID(snapshots.PrefixSnapshot)
			undo, err = snapshots.SnapshotRow(s.st.CoreSnapshotInsert(ctx, tx, db.CoreSnapshotInsertParams{ID: id, BoxID: b.ID,
				BoxName: b.Name, BoxKind: b.Kind, BoxSystem: b.System, BoxThreadID: b.ThreadID, BackendID: b.BackendID,
				Host: b.Host, GuestGeneration: b.Generation, Name: name, TakenAt: s.now(), ByKind: caller.ByKind(),
				ByThreadID: threadOf(caller), ByWhy: snapshots.NilIfEmpty(caller.Why), Scope: scope, Holds: string(providers.HoldsDisk),
				Excludes: snapshots.NilIfEmpty(excludes), OwnerKind: owner, OwnerThreadID: ownerThread, State: snapshots.StateTaking,
				Picture: "none", UndoOf: undoOfOp(op)}))
			if err != nil {
				return err
			}
			if err := s.recordPrice(ctx, tx, undo, snapping); err != nil {
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
		u, err := s.k.SnapshotByID(ctx, s.st.Pool, *op.UndoID)
		if err != nil {
			return nil, fmt.Errorf("the undo's record is gone")
		}
		undo = u
		if undo.State == snapshots.StateReady {
			return undo, nil
		}
		if undo.State != snapshots.StateTaking {
			return nil, fmt.Errorf("the undo is %s", snapshots.StateWords(undo.State))
		}
	}
	return undo, nil
}

// undoNameOf names the snapshot an operation takes before it changes the
// box: a restore's undo, a reset's undo, a release's final snapshot.
func undoNameOf(op *snapshots.Operation, tz *time.Location) string {
	at := op.CreatedAt.In(tz).Format("15:04")
	switch op.Kind {
	case snapshots.OpRelease:
		return "at the release at " + at
	case snapshots.OpReset:
		return "before the reset at " + at
	}
	return snapshots.UndoName(op.CreatedAt, tz)
}

// undoOfOp is what the snapshot's undo_of records: the operation it is the
// undo of; a release's final snapshot is no undo.
func undoOfOp(op *snapshots.Operation) *string {
	if op.Kind == snapshots.OpRelease {
		return nil
	}
	id := op.ID
	return &id
}

// undoCallerOf is who takes the snapshot: boxsnap takes a release's final
// snapshot; an undo is its operation's caller's.
func undoCallerOf(op *snapshots.Operation) snapshots.Caller {
	if op.Kind == snapshots.OpRelease {
		return snapshots.System("the box's release")
	}
	return snapshots.CallerOf(op)
}

// undoWordsOf says what the snapshot is, for the box log.
func undoWordsOf(op *snapshots.Operation) string {
	switch op.Kind {
	case snapshots.OpRelease:
		return "the final snapshot of its release"
	case snapshots.OpReset:
		return "the undo of this reset"
	}
	return "the undo of this restore"
}
