package boxes

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/jackc/pgx/v5"
)

// ReleaseResult is what a finished release answers: into the trash (Trash,
// until when, its final snapshot), or released.
type ReleaseResult struct {
	Box   string     `json:"box"`
	Trash bool       `json:"trash,omitempty"`
	Until *time.Time `json:"until,omitempty"`
	Final string     `json:"finalSnapshot,omitempty"`
}

// ReleaseBox admits a box's release: it waits its turn behind a running take,
// then moves the box to the trash (trash.go) while Settings keeps a trash;
// otherwise, and when the trash is emptied, it deletes the box's snapshots
// that nobody kept, marks the kept ones released, and releases the guest.
func (s *Boxes) ReleaseBox(ctx context.Context, c snapshots.Caller, ref, requestID string) (*snapshots.Operation, error) {
	return s.releaseBox(ctx, c, ref, requestID, releaseParams{})
}

// ReleaseBoxDeletingKept is the person's "Release and delete it", offered
// when a release stopped because a held copy could not be made: each kept
// snapshot of the box not yet copied stops being kept and goes with it; held
// copies made already stay kept.
func (s *Boxes) ReleaseBoxDeletingKept(ctx context.Context, c snapshots.Caller, ref, requestID string) (*snapshots.Operation, error) {
	if !c.IsPerson() {
		return nil, &snapshots.Refusal{Code: snapshots.CodeForbidden, Words: onlyPersonDeletesKeptWords}
	}
	return s.releaseBox(ctx, c, ref, requestID, releaseParams{DeleteKept: true})
}

func (s *Boxes) releaseBox(ctx context.Context, c snapshots.Caller, ref, requestID string, p releaseParams) (*snapshots.Operation, error) {
	// A repeat answers the first release, though the box is released.
	if op, err := s.k.Repeated(ctx, c, requestID, snapshots.OpRelease, ref, ""); err != nil || op != nil {
		return op, err
	}
	b, err := s.k.Box(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	if err := snapshots.MayBox(c, snapshots.BoxRelease, b); err != nil {
		return nil, err
	}
	if op, err := s.k.ExistingRequest(ctx, s.st.Pool, c, requestID, snapshots.OpRelease, nil); err != nil || op != nil {
		return op, err
	}
	settings, err := s.k.Settings(ctx)
	if err != nil {
		return nil, err
	}
	var op *snapshots.Operation
	err = store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		b, err := s.k.LockBox(ctx, tx, b.ID)
		if err != nil {
			return err
		}
		switch {
		case b.State == snapshots.BoxTrashed && (p.Empty || p.DeleteKept && c.IsPerson()):
			p.Empty = true
		case b.State == snapshots.BoxTrashed:
			return &snapshots.Refusal{Code: snapshots.CodeConflict, Words: inTrashAlreadyWords(b.Name)}
		case p.Empty:
			return notInTrash(b)
		case b.State != snapshots.BoxReady:
			return &snapshots.Refusal{Code: snapshots.CodeConflict, Words: boxIsAlreadyWords(b.Name, b.State)}
		}
		p.Trash = !p.Empty && !p.DeleteKept && settings.TrashHours > 0
		if err := s.k.Unsettled(ctx, tx, b); err != nil {
			return err
		}
		if p.dryRun {
			return errReleaseChecked
		}
		if err := s.st.CoreBoxSetState(ctx, tx, db.CoreBoxSetStateParams{ID: b.ID, State: string(snapshots.BoxReleasing)}); err != nil {
			return err
		}
		op, err = s.k.Admit(ctx, tx, snapshots.OpRequest{Kind: snapshots.OpRelease, Box: b, Caller: c, RequestID: requestID, Params: p})
		return err
	})
	return op, err
}

func (s *Boxes) runRelease(ctx context.Context, op *snapshots.Operation, p releaseParams) (ReleaseResult, error) {
	b, err := s.k.BoxByID(ctx, s.st.Pool, *op.BoxID)
	if err != nil {
		return ReleaseResult{}, err
	}
	be, err := s.k.Backend(b.BackendID)
	if err != nil {
		return ReleaseResult{}, s.k.End(ctx, op, snapshots.OpFailed, err.Error(), "")
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
	if err := s.k.Step(ctx, op, snapshots.StepDelete); err != nil {
		return ReleaseResult{}, err
	}
	all, err := s.k.SnapshotsOfBox(ctx, s.st.Pool, b.ID)
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
		if err := s.del.DeleteWith(ctx, op, sn, b, be, snapshots.System("its box was released"), "its box was released", s.k.TaskRecorder(op)); err != nil {
			if operations.Pending(err) {
				return ReleaseResult{}, err
			}
			return ReleaseResult{}, s.k.End(ctx, op, snapshots.OpFailed, releaseCouldNotDeleteWords(sn.Name, snapshots.TaskFailedWords(op, err.Error())), "")
		}
		op.TaskEnded = nil // the task waited for was this delete's: the next snooze on their own
	}
	if err := s.k.Step(ctx, op, snapshots.StepRelease); err != nil {
		return ReleaseResult{}, err
	}
	// The guest's stop and destroy are waited for by the job's snooze where
	// the backend can leave them (providers.TaskReleaser).
	var rerr error
	if tr, ok := be.Boxes.(providers.TaskReleaser); ok {
		rerr = tr.ReleaseRecorded(ctx, snapshots.GuestOf(b), s.k.TaskRecorder(op))
	} else {
		rerr = be.Boxes.Release(ctx, snapshots.GuestOf(b))
	}
	if operations.Pending(rerr) {
		return ReleaseResult{}, rerr
	}
	if rerr != nil {
		return ReleaseResult{}, s.k.End(ctx, op, snapshots.OpFailed, releaseUnfinishedWords(snapshots.TaskFailedWords(op, rerr.Error())), "")
	}
	if err := s.releaseEarlier(ctx, op, b, be); err != nil {
		if operations.Pending(err) {
			return ReleaseResult{}, err
		}
		return ReleaseResult{}, s.k.End(ctx, op, snapshots.OpFailed, releaseUnfinishedWords(err.Error()), "")
	}
	err = store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		if err := s.st.CoreSnapshotBoxGone(ctx, tx, db.CoreSnapshotBoxGoneParams{BoxID: b.ID, How: "released"}); err != nil {
			return err
		}
		if err := s.st.TrashForget(ctx, tx, b.ID); err != nil {
			return err
		}
		return s.st.CoreBoxSetState(ctx, tx, db.CoreBoxSetStateParams{ID: b.ID, State: string(snapshots.BoxReleased)})
	})
	if err != nil {
		return ReleaseResult{}, fmt.Errorf("record release of %s: %w", b.Name, err)
	}
	s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvReleased, snapshots.CallerOf(op), LogReleasedWords, "", op.ID, nil)
	return ReleaseResult{Box: b.ID}, nil
}
