package snapshots

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/providers"
)

// DeleteRequest asks to delete one snapshot.
type DeleteRequest struct {
	Box       string
	Snapshot  string
	RequestID string
}

// DeleteResult is what a finished delete answers.
type DeleteResult struct {
	Snapshot string `json:"snapshot"`
	Name     string `json:"name"`
	Freed    *int64 `json:"freedBytes,omitempty"`
}

// Delete admits a delete after mayAct and eligible.
func (s *Service) Delete(ctx context.Context, c Caller, req DeleteRequest) (*Operation, error) {
	// A repeat answers the first delete, though its snapshot is gone.
	if op, err := s.Repeated(ctx, c, req.RequestID, OpDelete, req.Box, req.Snapshot); err != nil || op != nil {
		return op, err
	}
	sn, b, err := s.SnapshotOfBox(ctx, c, req.Box, req.Snapshot)
	if err != nil {
		return nil, err
	}
	if err := MayAct(c, ActDelete, b, sn); err != nil {
		return nil, err
	}
	if op, err := s.ExistingRequest(ctx, s.st.Pool, c, req.RequestID, OpDelete, &sn.ID); err != nil || op != nil {
		return op, err
	}
	var op *Operation
	err = store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		_, sn, err := s.ChangeNow(ctx, tx, b.ID, sn.ID, req.Snapshot, ChangeDelete)
		if err != nil {
			return err
		}
		op, err = s.Admit(ctx, tx, OpRequest{Kind: OpDelete, Box: b, Target: sn, Pins: []string{sn.ID}, Caller: c, RequestID: req.RequestID})
		return err
	})
	return op, err
}

// DeleteParams are a delete's parameters: none for the person's, the CLI's
// or an agent's; the room sweep's says its change (evict-room) and why.
type DeleteParams struct {
	Change Change `json:"change,omitempty"`
	Why    string `json:"why,omitempty"`
}

// runDelete runs a delete from the step it reached; eligible is asked again
// now, at the moment of the change.
func (s *Service) runDelete(ctx context.Context, op *Operation, p DeleteParams) (DeleteResult, error) {
	sn, err := s.SnapshotByID(ctx, s.st.Pool, PinTarget(op))
	if errors.Is(err, store.ErrNotFound) {
		return DeleteResult{}, s.Finish(ctx, op, OpDone, DeleteResult{Snapshot: PinTarget(op)}, "", observedAlreadyGone)
	}
	if err != nil {
		return DeleteResult{}, err
	}
	b, err := s.BoxByID(ctx, s.st.Pool, sn.BoxID)
	if err != nil {
		return DeleteResult{}, err
	}
	change := ChangeDelete
	caller := CallerOf(op)
	why := ByWhy(caller)
	switch {
	case op.Kind == OpExpiry:
		change, why = ChangeExpire, "its keep ended"
	case p.Change != "":
		change, caller, why = p.Change, System(p.Why), "by boxsnap: "+p.Why
	}
	if sn.State != StateDeleting {
		pins, err := s.Pins(ctx, s.st.Pool, sn.ID, op.ID)
		if err != nil {
			return DeleteResult{}, err
		}
		if err := Eligible(sn, change, pins, s.now(), s.TimeZone(ctx)); err != nil {
			return DeleteResult{}, s.Finish(ctx, op, OpFailed, nil, err.Error(), "")
		}
	}
	be, err := s.Backend(sn.BackendID)
	if err != nil {
		return DeleteResult{}, s.Finish(ctx, op, OpFailed, nil, err.Error(), "")
	}
	// The backend's task is waited for by the job's snooze, not here: a
	// resumed delete finds the snapshot gone and ends, or, when the task
	// failed, asks once more and waits in place for the backend's words.
	if err := s.DeleteWith(ctx, op, sn, b, be, caller, why, s.TaskRecorder(op)); err != nil {
		if operations.Pending(err) {
			return DeleteResult{}, err
		}
		return DeleteResult{}, s.Finish(ctx, op, OpFailed, nil, err.Error(), "")
	}
	return DeleteResult{Snapshot: sn.ID, Name: sn.Name, Freed: freed(sn)}, nil
}

func freed(sn *Snapshot) *int64 {
	if sn.SizeBytes != nil && sn.SizeMeaning != nil && *sn.SizeMeaning == "own" {
		return sn.SizeBytes
	}
	return nil
}

// ByWhy is the box log's why for a delete (by you, by the agent, ...).
func ByWhy(c Caller) string {
	switch c.Kind {
	case CallerOwner, CallerCLI, CallerAgent:
		return ByWords(string(c.Kind), "", "")
	}
	return c.Why
}

// finishLeftDeletes finishes the deletes a step of op began before its
// worker stopped or its job snoozed: the snapshots in all (the box's, as read
// by the step) that are still deleting, that the step deletes (mine), and
// that no other operation pins. It answers their names, and
// operations.ErrTaskPending when a backend's task is left to the job's
// snooze. A step that deletes calls it as it resumes, so a kill between the
// record's "deleting" and its removal leaves nothing half gone.
func (s *Service) FinishLeftDeletes(ctx context.Context, op *Operation, b *Box, be Backend, all []*Snapshot, mine func(*Snapshot) bool, c Caller, why string) ([]string, error) {
	var done []string
	for _, sn := range all {
		if sn.State != StateDeleting || !mine(sn) {
			continue
		}
		pins, err := s.Pins(ctx, s.st.Pool, sn.ID, op.ID)
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
func (s *Service) DeleteStep(ctx context.Context, op *Operation, sn *Snapshot, b *Box, be Backend, c Caller, why string) error {
	return s.DeleteWith(ctx, op, sn, b, be, c, why, s.TaskRecorder(op))
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
func (s *Service) DeleteWith(ctx context.Context, op *Operation, sn *Snapshot, b *Box, be Backend, c Caller, why string, rec providers.Recorder) error {
	if sn.State != StateDeleting {
		if err := s.MoveState(ctx, s.st.Pool, sn, StateDeleting, ""); err != nil {
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
		if err := s.Step(ctx, op, StepDelete); err != nil {
			return err
		}
	}
	earlier, err := s.lastOnEarlier(ctx, sn, b)
	if err != nil {
		return err
	}
	switch {
	case earlier != nil:
		if err := s.ReleaseGuest(ctx, be, *earlier, rec); err != nil {
			if operations.Pending(err) {
				return err
			}
			words := deletePartWayWords(err)
			if merr := s.MoveState(ctx, s.st.Pool, sn, StateIncomplete, words); merr != nil {
				s.logger.Error("mark incomplete", "snapshot", sn.ID, "err", merr)
			}
			return fmt.Errorf("delete ‘%s’ with %s's earlier guest %s: %w", sn.Name, b.Name, earlier.Ref, err)
		}
	case sn.Ref != "":
		if err := be.Snap.DeleteSnapshot(ctx, RefOf(sn, b), rec); err != nil {
			if operations.Pending(err) {
				return err
			}
			words := deletePartWayWords(err)
			if merr := s.MoveState(ctx, s.st.Pool, sn, StateIncomplete, words); merr != nil {
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
		s.Log(ctx, tx, b.ID, EvSnapshotDeleted, c, words, sn.ID, op.ID, nil)
		if earlier != nil {
			s.Log(ctx, tx, b.ID, EvSnapshotDeleted, System("its last snapshot went"), logEarlierGuestDeletedWords(b.Name, earlier.Ref), "", op.ID, nil)
		}
		return nil
	}); err != nil {
		return err
	}
	return nil
}
