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

// ReleaseBox admits a box's release: it waits its turn behind a running take,
// then moves the box to the trash (trash.go) while Settings keeps a trash;
// otherwise, and when the trash is emptied, it deletes the box's snapshots
// that nobody kept, marks the kept ones released, and releases the guest.
func (s *Boxes) ReleaseBox(ctx context.Context, c Caller, ref, requestID string) (*Operation, error) {
	return s.releaseBox(ctx, c, ref, requestID, releaseParams{})
}

// ReleaseBoxDeletingKept is the person's "Release and delete it", offered
// when a release stopped because a held copy could not be made: each kept
// snapshot of the box not yet copied stops being kept and goes with it; held
// copies made already stay kept.
func (s *Boxes) ReleaseBoxDeletingKept(ctx context.Context, c Caller, ref, requestID string) (*Operation, error) {
	if !c.IsPerson() {
		return nil, refusal(CodeForbidden, wordsOnlyPersonDeletesKept)
	}
	return s.releaseBox(ctx, c, ref, requestID, releaseParams{DeleteKept: true})
}

func (s *Boxes) releaseBox(ctx context.Context, c Caller, ref, requestID string, p releaseParams) (*Operation, error) {
	// A repeat answers the first release, though the box is released.
	if op, err := s.repeated(ctx, c, requestID, OpRelease, ref, ""); err != nil || op != nil {
		return op, err
	}
	b, err := s.Box(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	if err := MayBox(c, BoxRelease, b); err != nil {
		return nil, err
	}
	if op, err := s.ExistingRequest(ctx, s.st.Pool, c, requestID, OpRelease, nil); err != nil || op != nil {
		return op, err
	}
	settings, err := s.Settings(ctx)
	if err != nil {
		return nil, err
	}
	var op *Operation
	err = store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		b, err := s.LockBox(ctx, tx, b.ID)
		if err != nil {
			return err
		}
		switch {
		case b.State == BoxTrashed && (p.Empty || p.DeleteKept && c.IsPerson()):
			p.Empty = true
		case b.State == BoxTrashed:
			return refusal(CodeConflict, wordsInTrashAlready(b.Name))
		case p.Empty:
			return notInTrash(b)
		case b.State != BoxReady:
			return refusal(CodeConflict, wordsBoxIsAlready(b.Name, b.State))
		}
		p.Trash = !p.Empty && !p.DeleteKept && settings.TrashHours > 0
		if err := s.unsettled(ctx, tx, b); err != nil {
			return err
		}
		if err := s.st.CoreBoxSetState(ctx, tx, db.CoreBoxSetStateParams{ID: b.ID, State: string(BoxReleasing)}); err != nil {
			return err
		}
		op, err = s.Admit(ctx, tx, OpRequest{Kind: OpRelease, Box: b, Caller: c, RequestID: requestID, Params: p})
		return err
	})
	return op, err
}

func (s *Boxes) runRelease(ctx context.Context, op *Operation, p releaseParams) (ReleaseResult, error) {
	b, err := s.BoxByID(ctx, s.st.Pool, *op.BoxID)
	if err != nil {
		return ReleaseResult{}, err
	}
	be, err := s.Backend(b.BackendID)
	if err != nil {
		return ReleaseResult{}, s.Finish(ctx, op, OpFailed, nil, err.Error(), "")
	}
	if p.Trash {
		return s.runTrash(ctx, op, b, be)
	}
	// Keep is confirmed only when it will last: each kept snapshot's held
	// copy is a template before any guest goes.
	if err := s.holdKept(ctx, op, b, be, p); err != nil {
		var cf *copyFailedError
		if !errors.As(err, &cf) {
			return ReleaseResult{}, err
		}
		return ReleaseResult{}, s.releaseStopped(ctx, op, b, cf.words)
	}
	if err := s.Step(ctx, op, StepDelete); err != nil {
		return ReleaseResult{}, err
	}
	all, err := s.snapshotsOfBox(ctx, s.st.Pool, b.ID)
	if err != nil {
		return ReleaseResult{}, err
	}
	for _, sn := range all {
		if sn.Kept() || sn.Guest == "earlier" {
			continue // an earlier guest's unkept snapshots go with it, below
		}
		// Each delete's provider task is waited for by the job's snooze:
		// the release resumes here, and the snapshot still deleting is
		// deleted again (gone already: its record goes).
		if err := s.snaps.DeleteWith(ctx, op, sn, b, be, System("its box was released"), "its box was released", s.snaps.TaskRecorder(op)); err != nil {
			if operations.Pending(err) {
				return ReleaseResult{}, err
			}
			return ReleaseResult{}, s.Finish(ctx, op, OpFailed, nil, wordsReleaseCouldNotDelete(sn.Name, TaskFailedWords(op, err.Error())), "")
		}
		op.TaskEnded = nil // the task waited for was this delete's: the next snooze on their own
	}
	if err := s.Step(ctx, op, StepRelease); err != nil {
		return ReleaseResult{}, err
	}
	// The guest's stop and destroy are waited for by the job's snooze where
	// the backend can leave them (providers.TaskReleaser).
	var rerr error
	if tr, ok := be.Boxes.(providers.TaskReleaser); ok {
		rerr = tr.ReleaseRecorded(ctx, GuestOf(b), s.snaps.TaskRecorder(op))
	} else {
		rerr = be.Boxes.Release(ctx, GuestOf(b))
	}
	if operations.Pending(rerr) {
		return ReleaseResult{}, rerr
	}
	if rerr != nil {
		return ReleaseResult{}, s.Finish(ctx, op, OpFailed, nil, wordsReleaseUnfinished(TaskFailedWords(op, rerr.Error())), "")
	}
	if err := s.releaseEarlier(ctx, op, b, be); err != nil {
		if operations.Pending(err) {
			return ReleaseResult{}, err
		}
		return ReleaseResult{}, s.Finish(ctx, op, OpFailed, nil, wordsReleaseUnfinished(err.Error()), "")
	}
	err = store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		if err := s.st.CoreSnapshotBoxGone(ctx, tx, db.CoreSnapshotBoxGoneParams{BoxID: b.ID, How: "released"}); err != nil {
			return err
		}
		if err := s.st.TrashForget(ctx, tx, b.ID); err != nil {
			return err
		}
		return s.st.CoreBoxSetState(ctx, tx, db.CoreBoxSetStateParams{ID: b.ID, State: string(BoxReleased)})
	})
	if err != nil {
		return ReleaseResult{}, fmt.Errorf("record release of %s: %w", b.Name, err)
	}
	s.Log(ctx, s.st.Pool, b.ID, EvReleased, CallerOf(op), logReleasedWords, "", op.ID, nil)
	return ReleaseResult{Box: b.ID}, nil
}
