package keep

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/providers"
)

// Delete admits a delete after mayAct and eligible.
func (s *Keeps) Delete(ctx context.Context, c snapshots.Caller, req snapshots.DeleteRequest) (*snapshots.Operation, error) {
	// A repeat answers the first delete, though its snapshot is gone.
	if op, err := s.k.Repeated(ctx, c, req.RequestID, snapshots.OpDelete, req.Box, req.Snapshot); err != nil || op != nil {
		return op, err
	}
	sn, b, err := s.k.SnapshotOfBox(ctx, c, req.Box, req.Snapshot)
	if err != nil {
		return nil, err
	}
	if err := snapshots.MayAct(c, snapshots.ActDelete, b, sn); err != nil {
		return nil, err
	}
	if op, err := s.k.ExistingRequest(ctx, s.st.Pool, c, req.RequestID, snapshots.OpDelete, &sn.ID); err != nil || op != nil {
		return op, err
	}
	var op *snapshots.Operation
	err = store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		_, sn, err := s.k.ChangeNow(ctx, tx, b.ID, sn.ID, req.Snapshot, snapshots.ChangeDelete)
		if err != nil {
			return err
		}
		op, err = s.k.Admit(ctx, tx, snapshots.OpRequest{Kind: snapshots.OpDelete, Box: b, Target: sn, Pins: []string{sn.ID}, Caller: c, RequestID: req.RequestID})
		return err
	})
	return op, err
}

// deleteKind is op's kind of the two runDelete runs, so a delete that ends
// itself records its typed result through its own kind.
func (s *Keeps) deleteKind(op *snapshots.Operation) *operations.Kind[snapshots.DeleteParams, snapshots.DeleteResult] {
	if op.Kind == snapshots.OpExpiry {
		return s.kinds.Expiry
	}
	return s.kinds.Delete
}

// runDelete runs a delete from the step it reached; eligible is asked again
// now, at the moment of the change.
func (s *Keeps) runDelete(ctx context.Context, op *snapshots.Operation, p snapshots.DeleteParams) (snapshots.DeleteResult, error) {
	sn, err := s.k.SnapshotByID(ctx, s.st.Pool, snapshots.PinTarget(op))
	if errors.Is(err, store.ErrNotFound) {
		return snapshots.DeleteResult{}, s.deleteKind(op).EndWith(ctx, op, snapshots.OpDone, snapshots.DeleteResult{Snapshot: snapshots.PinTarget(op)}, "", observedAlreadyGone)
	}
	if err != nil {
		return snapshots.DeleteResult{}, err
	}
	b, err := s.k.BoxByID(ctx, s.st.Pool, sn.BoxID)
	if err != nil {
		return snapshots.DeleteResult{}, err
	}
	change := snapshots.ChangeDelete
	caller := snapshots.CallerOf(op)
	why := snapshots.ByWhy(caller)
	switch {
	case op.Kind == snapshots.OpExpiry:
		change, why = snapshots.ChangeExpire, "its keep ended"
	case p.Change != "":
		change, caller, why = p.Change, snapshots.System(p.Why), "by boxsnap: "+p.Why
	}
	if sn.State != snapshots.StateDeleting {
		pins, err := s.k.Pins(ctx, s.st.Pool, sn.ID, op.ID)
		if err != nil {
			return snapshots.DeleteResult{}, err
		}
		if err := snapshots.Eligible(sn, change, pins, s.now(), s.k.TimeZone(ctx)); err != nil {
			return snapshots.DeleteResult{}, s.k.End(ctx, op, snapshots.OpFailed, err.Error(), "")
		}
	}
	be, err := s.k.Backend(sn.BackendID)
	if err != nil {
		return snapshots.DeleteResult{}, s.k.End(ctx, op, snapshots.OpFailed, err.Error(), "")
	}
	// The backend's task is waited for by the job's snooze, not here: a
	// resumed delete finds the snapshot gone and ends, or, when the task
	// failed, asks once more and waits in place for the backend's words.
	if err := s.DeleteWith(ctx, op, sn, b, be, caller, why, s.k.TaskRecorder(op)); err != nil {
		if operations.Pending(err) {
			return snapshots.DeleteResult{}, err
		}
		return snapshots.DeleteResult{}, s.k.End(ctx, op, snapshots.OpFailed, err.Error(), "")
	}
	return snapshots.DeleteResult{Snapshot: sn.ID, Name: sn.Name, Freed: freed(sn)}, nil
}

func freed(sn *snapshots.Snapshot) *int64 {
	if sn.SizeBytes != nil && sn.SizeMeaning != nil && *sn.SizeMeaning == "own" {
		return sn.SizeBytes
	}
	return nil
}

// finishLeftDeletes finishes the deletes a step of op began before its
// worker stopped or its job snoozed: the snapshots in all (the box's, as read
// by the step) that are still deleting, that the step deletes (mine), and
// that no other operation pins. It answers their names, and
// operations.ErrTaskPending when a backend's task is left to the job's
// snooze. A step that deletes calls it as it resumes, so a kill between the
// record's "deleting" and its removal leaves nothing half gone.
func (s *Keeps) FinishLeftDeletes(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, be snapshots.Backend, all []*snapshots.Snapshot, mine func(*snapshots.Snapshot) bool, c snapshots.Caller, why string) ([]string, error) {
	var done []string
	for _, sn := range all {
		if sn.State != snapshots.StateDeleting || !mine(sn) {
			continue
		}
		pins, err := s.k.Pins(ctx, s.st.Pool, sn.ID, op.ID)
		if err != nil || len(pins) > 0 {
			continue // another operation deletes it
		}
		if err := s.DeleteStep(ctx, op, sn, b, be, c, why); err != nil {
			if operations.Pending(err) {
				return done, err
			}
			s.logger.Warn("finish a delete cut short", "snapshot", sn.ID, "err", err)
			continue
		}
		done = append(done, sn.Name)
	}
	return done, nil
}

// deleteStep deletes a snapshot within a step of op that resumes through
// finishLeftDeletes (a restore's or a reset's older undos, a take's limit,
// a swapped-in held copy): the backend's task is left to the job's snooze,
// which answers operations.ErrTaskPending with the snapshot deleting, and
// the step's resume finishes it.
func (s *Keeps) DeleteStep(ctx context.Context, op *snapshots.Operation, sn *snapshots.Snapshot, b *snapshots.Box, be snapshots.Backend, c snapshots.Caller, why string) error {
	return s.DeleteWith(ctx, op, sn, b, be, c, why, s.k.TaskRecorder(op))
}

// DeleteWith deletes a snapshot within an operation that holds its box's
// turn: deleting, the backend's delete, then the record goes, with the
// recorder of the backend's task: one that snoozes answers
// operations.ErrTaskPending, with the snapshot deleting. A delete cut short
// leaves the snapshot incomplete, and another delete finishes it. The last
// snapshot on a box's earlier guest goes with that guest ("it is deleted when
// its last snapshot goes"): the guest's release is its backend's delete, so a
// resume finds the record still deleting and releases it again (gone already:
// the record goes).
func (s *Keeps) DeleteWith(ctx context.Context, op *snapshots.Operation, sn *snapshots.Snapshot, b *snapshots.Box, be snapshots.Backend, c snapshots.Caller, why string, rec providers.Recorder) error {
	if sn.State != snapshots.StateDeleting {
		if err := s.k.MoveState(ctx, s.st.Pool, sn, snapshots.StateDeleting, ""); err != nil {
			return err
		}
	}
	// A delete that is its operation's own step is recorded as such; one
	// within another step (a restore's older undos, a take's limit) leaves
	// that step recorded, so a resume after a kill comes back to it rather
	// than to the operation's start, and finishes this delete there
	// (finishLeftDeletes). A queued operation (a delete's, a thinning's)
	// has no step of its own yet.
	if op.Step == "" || op.Step == operations.StepQueued {
		if err := s.k.Step(ctx, op, snapshots.StepDelete); err != nil {
			return err
		}
	}
	earlier, err := s.lastOnEarlier(ctx, sn, b)
	if err != nil {
		return err
	}
	switch {
	case earlier != nil:
		if err := s.k.ReleaseGuest(ctx, be, *earlier, rec); err != nil {
			if operations.Pending(err) {
				return err
			}
			words := deletePartWayWords(err)
			if merr := s.k.MoveState(ctx, s.st.Pool, sn, snapshots.StateIncomplete, words); merr != nil {
				s.logger.Error("mark incomplete", "snapshot", sn.ID, "err", merr)
			}
			return fmt.Errorf("delete ‘%s’ with %s's earlier guest %s: %w", sn.Name, b.Name, earlier.Ref, err)
		}
	case sn.Ref != "":
		if err := be.Snap.DeleteSnapshot(ctx, snapshots.RefOf(sn, b), rec); err != nil {
			if operations.Pending(err) {
				return err
			}
			words := deletePartWayWords(err)
			if merr := s.k.MoveState(ctx, s.st.Pool, sn, snapshots.StateIncomplete, words); merr != nil {
				s.logger.Error("mark incomplete", "snapshot", sn.ID, "err", merr)
			}
			return fmt.Errorf("delete ‘%s’: %w", sn.Name, err)
		}
	}
	words := logDeletedWords(sn.Name, sn.ID, freed(sn), why)
	// The record goes with its box log event, in one transaction: a worker
	// killed between the two left a delete the log never told, and the
	// resumed delete, finding the record gone, did not tell it either.
	if err := store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		if err := s.st.CoreSnapshotDelete(ctx, tx, sn.ID); err != nil {
			return fmt.Errorf("remove the record of %s: %w", sn.ID, err)
		}
		s.k.Log(ctx, tx, b.ID, snapshots.EvSnapshotDeleted, c, words, sn.ID, op.ID, nil)
		if earlier != nil {
			s.k.Log(ctx, tx, b.ID, snapshots.EvSnapshotDeleted, snapshots.System("its last snapshot went"), logEarlierGuestDeletedWords(b.Name, earlier.Ref), "", op.ID, nil)
		}
		return nil
	}); err != nil {
		return err
	}
	return nil
}
