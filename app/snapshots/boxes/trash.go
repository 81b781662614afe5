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

// UntrashResult is what a finished restore from the trash answers.
type UntrashResult struct {
	Box     string `json:"box"`
	Started bool   `json:"started"`
}

// ReleaseWords says what a release of b does now, in the words of the
// release dialog: into the trash for the setting's hours, with a final
// snapshot where the backend can take one, or deleted at once.
func (s *Boxes) ReleaseWords(ctx context.Context, b *snapshots.Box) (string, error) {
	st, err := s.k.Settings(ctx)
	if err != nil {
		return "", err
	}
	be, err := s.k.Backend(b.BackendID)
	if err != nil {
		return "", err
	}
	if st.TrashHours == 0 {
		return fmt.Sprintf("%s is deleted at once: the trash is off in Settings.", b.Name), nil
	}
	final := "boxsnap takes a final snapshot of it first"
	if be.Snap.Snapshotting(b.Kind) == nil {
		final = fmt.Sprintf("%s takes no snapshot of it, so it goes as it is", be.Label)
	}
	return fmt.Sprintf("%s goes to the trash for %d hours: %s, and you can restore it with its history until then. %s",
		b.Name, st.TrashHours, final, snapshots.TrashCostWords(be.Kind)), nil
}

func (s *Boxes) trashEntry(ctx context.Context, b *snapshots.Box, r *snapshots.TrashRow) snapshots.TrashEntry {
	e := snapshots.TrashEntry{Box: b, TrashedAt: r.TrashedAt, Until: r.Until, Final: r.FinalSnapshot, FinalWords: r.FinalWords,
		WasRunning: r.WasRunning, ByKind: r.ByKind}
	if r.FinalSnapshot != nil {
		if sn, err := s.k.SnapshotByID(ctx, s.st.Reader(ctx), *r.FinalSnapshot); err == nil {
			e.FinalName = sn.Name
		}
	}
	if be, err := s.k.Backend(b.BackendID); err == nil {
		e.Costs = snapshots.TrashCostWords(be.Kind)
	}
	return e
}

// Trash lists the boxes in the trash that the caller may see, the soonest
// to go first: an agent sees only its own thread's.
func (s *Boxes) Trash(ctx context.Context, c snapshots.Caller) ([]snapshots.TrashEntry, error) {
	all, err := s.st.TrashList(ctx, s.st.Reader(ctx))
	if err != nil {
		return nil, fmt.Errorf("list the trash: %w", err)
	}
	out := []snapshots.TrashEntry{}
	for i := range all {
		r := &all[i]
		b, err := s.k.BoxByID(ctx, s.st.Reader(ctx), r.BoxID)
		if err != nil || snapshots.MayAct(c, snapshots.ActSee, b, nil) != nil {
			continue
		}
		out = append(out, s.trashEntry(ctx, b, r))
	}
	return out, nil
}

// TrashOf reads one box in the trash as the caller may see it.
func (s *Boxes) TrashOf(ctx context.Context, c snapshots.Caller, ref string) (*snapshots.TrashEntry, error) {
	b, err := s.k.Box(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	r, err := s.k.TrashRow(ctx, s.st.Pool, b.ID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && b.State != snapshots.BoxTrashed) {
		return nil, notInTrash(b)
	}
	if err != nil {
		return nil, err
	}
	e := s.trashEntry(ctx, b, r)
	return &e, nil
}

func notInTrash(b *snapshots.Box) *snapshots.Refusal {
	return &snapshots.Refusal{Code: snapshots.CodeConflict, Words: notInTrashWords(b.Name)}
}

// RestoreFromTrash admits the restore of a box from the trash: its guest
// made as it was (links up, onboot back), started if it ran, with its
// history. The person restores any box; an agent only its own thread's.
func (s *Boxes) RestoreFromTrash(ctx context.Context, c snapshots.Caller, ref, requestID string) (*snapshots.Operation, error) {
	if op, err := s.k.Repeated(ctx, c, requestID, snapshots.OpUntrash, ref, ""); err != nil || op != nil {
		return op, err
	}
	b, err := s.k.Box(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	if err := snapshots.MayBox(c, snapshots.BoxRelease, b); err != nil {
		return nil, err
	}
	if op, err := s.k.ExistingRequest(ctx, s.st.Pool, c, requestID, snapshots.OpUntrash, nil); err != nil || op != nil {
		return op, err
	}
	var op *snapshots.Operation
	err = store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		b, err := s.k.LockBox(ctx, tx, b.ID)
		if err != nil {
			return err
		}
		if b.State != snapshots.BoxTrashed {
			return notInTrash(b)
		}
		if err := s.k.Unsettled(ctx, tx, b); err != nil {
			return err
		}
		if err := s.st.CoreBoxSetState(ctx, tx, db.CoreBoxSetStateParams{ID: b.ID, State: string(snapshots.BoxReleasing)}); err != nil {
			return err
		}
		op, err = s.k.Admit(ctx, tx, snapshots.OpRequest{Kind: snapshots.OpUntrash, Box: b, Caller: c, RequestID: requestID})
		return err
	})
	return op, err
}

// EmptyTrash admits the release of a box in the trash now: its unkept
// snapshots go and its guest is released, as a release did before the
// trash. Only the person empties the trash; boxsnap does when the window
// ends (EmptyDueTrash).
func (s *Boxes) EmptyTrash(ctx context.Context, c snapshots.Caller, ref, requestID string) (*snapshots.Operation, error) {
	if !c.IsPerson() && c.Kind != snapshots.CallerSystem {
		return nil, &snapshots.Refusal{Code: snapshots.CodeForbidden, Words: onlyPersonEmptiesTrashWords}
	}
	return s.releaseBox(ctx, c, ref, requestID, releaseParams{Empty: true})
}

// runTrash is a release into the trash: the final snapshot, the stop and
// the inert guest, then the box marked trashed. Each step is recorded
// before it runs; a resumed one goes on from it.
func (s *Boxes) runTrash(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, be snapshots.Backend) (ReleaseResult, error) {
	st, err := s.k.Settings(ctx)
	if err != nil {
		return ReleaseResult{}, err
	}
	caller := snapshots.CallerOf(op)
	until := op.CreatedAt.Add(time.Duration(st.TrashHours) * time.Hour)
	if err := s.st.TrashInsert(ctx, s.st.Pool, db.TrashInsertParams{BoxID: b.ID, ReleaseOp: op.ID, TrashedAt: s.now(), Until: until,
		ByKind: caller.ByKind(), ByThreadID: threadOf(caller)}); err != nil {
		return ReleaseResult{}, fmt.Errorf("record %s in the trash: %w", b.Name, err)
	}
	if op.Step != snapshots.StepInert && op.Step != snapshots.StepRecord {
		if err := s.k.Step(ctx, op, snapshots.StepFinal); err != nil {
			return ReleaseResult{}, err
		}
		if err := s.takeFinal(ctx, op, b, be); err != nil {
			return ReleaseResult{}, err
		}
	}
	if op.Step != snapshots.StepRecord {
		first := op.Step != snapshots.StepInert
		if err := s.k.Step(ctx, op, snapshots.StepInert); err != nil {
			return ReleaseResult{}, err
		}
		if err := s.makeInert(ctx, op, b, be, first); err != nil {
			if operations.Pending(err) {
				return ReleaseResult{}, err // the job snoozes on the stop's task, and resumes here
			}
			if ctx.Err() != nil {
				return ReleaseResult{}, ctx.Err()
			}
			return ReleaseResult{}, s.trashFailed(ctx, op, b, releaseCouldNotStopWords(b.Name, taskFailedError(op, err)))
		}
	}
	if err := s.k.Step(ctx, op, snapshots.StepRecord); err != nil {
		return ReleaseResult{}, err
	}
	if err := s.st.CoreBoxSetState(ctx, s.st.Pool, db.CoreBoxSetStateParams{ID: b.ID, State: string(snapshots.BoxTrashed)}); err != nil {
		return ReleaseResult{}, fmt.Errorf("record %s in the trash: %w", b.Name, err)
	}
	r, err := s.k.TrashRow(ctx, s.st.Pool, b.ID)
	if err != nil {
		return ReleaseResult{}, err
	}
	tz := s.k.TimeZone(ctx)
	final, noFinal := "", r.FinalWords
	if r.FinalSnapshot != nil {
		noFinal = ""
		if sn, err := s.k.SnapshotByID(ctx, s.st.Reader(ctx), *r.FinalSnapshot); err == nil {
			final = sn.Name
		}
	}
	words := LogTrashedWords(r.Until, final, noFinal, tz)
	s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvTrashed, caller, words, "", op.ID, nil)
	trashedUntil := r.Until
	res := ReleaseResult{Box: b.ID, Trash: true, Until: &trashedUntil}
	if r.FinalSnapshot != nil {
		res.Final = *r.FinalSnapshot
	}
	return res, nil
}

// trashFailed ends a release into the trash that could not make the box
// inert: the box is ready again, out of the trash; its final snapshot stays
// in its history.
func (s *Boxes) trashFailed(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, words string) error {
	ctx = context.WithoutCancel(ctx)
	err := store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		if err := s.st.TrashForget(ctx, tx, b.ID); err != nil {
			return err
		}
		return s.st.CoreBoxSetState(ctx, tx, db.CoreBoxSetStateParams{ID: b.ID, State: string(snapshots.BoxReady)})
	})
	if err != nil {
		return fmt.Errorf("release of %s stopped: %w", b.Name, err)
	}
	s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvReleaseStopped, snapshots.CallerOf(op), words, "", op.ID, nil)
	return s.k.End(ctx, op, snapshots.OpFailed, words, observedReadyNotInTrash)
}

// takeFinal takes the release's final snapshot where the backend can, as an
// undo is taken (named "at the release at 11:02", by boxsnap, no undo), and
// records it on the trash, or why there is none. A final snapshot that
// fails does not stop the release: the trash keeps the box as it is.
func (s *Boxes) takeFinal(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, be snapshots.Backend) error {
	var final *string
	words := ""
	if be.Snap.Snapshotting(b.Kind) == nil {
		words = finalNoneWords(be.Label, b.Name)
	} else if plan, err := s.k.PlanNow(ctx, b, be, nil); err != nil {
		words = finalNoPlanWords(err)
	} else if !plan.Take.OK {
		words = plan.Take.Why
	} else {
		sn, err := s.k.TakeUndo(ctx, op, b, be, op.Resuming)
		if operations.Pending(err) {
			return err // the job snoozes on its task; the resumed run finds it by its label
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			words = finalFailedWords(err)
		} else {
			final = &sn.ID
		}
	}
	if err := s.st.TrashSetFinal(ctx, s.st.Pool, db.TrashSetFinalParams{BoxID: b.ID, FinalSnapshot: final, FinalWords: words}); err != nil {
		return fmt.Errorf("record %s's final snapshot: %w", b.Name, err)
	}
	return nil
}

// makeInert stops the box's guest and, where its backend needs it, makes it
// inert (providers.Trasher). first records whether it ran, before the stop,
// so a restore from the trash starts it again. The stop's task is left to
// the job's snooze where the backend can leave it: the step runs again as
// it resumes, and finds the guest stopped.
func (s *Boxes) makeInert(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, be snapshots.Backend, first bool) error {
	g := snapshots.GuestOf(b)
	if first {
		running := false
		if st, err := be.Boxes.Status(ctx, g); err == nil {
			running = st.Running
		}
		if err := s.st.TrashSetRunning(ctx, s.st.Pool, db.TrashSetRunningParams{BoxID: b.ID, WasRunning: running}); err != nil {
			return err
		}
	}
	if err := s.stopGuest(ctx, op, be, g); err != nil && !errors.Is(err, providers.ErrNotFound) {
		return err
	}
	t, ok := be.Snap.(providers.Trasher)
	if !ok {
		return nil
	}
	aside, err := t.TrashGuest(ctx, g)
	if err != nil {
		return err
	}
	if err := s.st.TrashSetAside(ctx, s.st.Pool, db.TrashSetAsideParams{BoxID: b.ID, GuestState: aside}); err != nil {
		return err
	}
	return nil
}

// runUntrash restores a box from the trash: its guest given back what was
// set aside, started if it ran, the box ready with its history; the final
// snapshot joins it as an automatic one.
func (s *Boxes) runUntrash(ctx context.Context, op *snapshots.Operation, _ struct{}) (UntrashResult, error) {
	b, err := s.k.BoxByID(ctx, s.st.Pool, *op.BoxID)
	if err != nil {
		return UntrashResult{}, err
	}
	r, err := s.k.TrashRow(ctx, s.st.Pool, b.ID)
	if err != nil {
		return UntrashResult{}, s.untrashFailed(ctx, op, b, untrashGoneWords(b.Name))
	}
	be, err := s.k.Backend(b.BackendID)
	if err != nil {
		return UntrashResult{}, s.untrashFailed(ctx, op, b, err.Error())
	}
	if err := s.k.Step(ctx, op, snapshots.StepInert); err != nil {
		return UntrashResult{}, err
	}
	g := snapshots.GuestOf(b)
	if t, ok := be.Snap.(providers.Trasher); ok {
		if err := t.UntrashGuest(ctx, g, r.GuestState); err != nil {
			if ctx.Err() != nil {
				return UntrashResult{}, ctx.Err()
			}
			return UntrashResult{}, s.untrashFailed(ctx, op, b, untrashGuestWords(b.Name, err))
		}
	}
	if r.WasRunning {
		// The start's task is left to the job's snooze where the backend
		// can leave it: the step runs again as it resumes, gives back what
		// was set aside again, and finds the guest running.
		if err := s.startGuest(ctx, op, be, g); err != nil {
			if operations.Pending(err) {
				return UntrashResult{}, err
			}
			if ctx.Err() != nil {
				return UntrashResult{}, ctx.Err()
			}
			return UntrashResult{}, s.untrashFailed(ctx, op, b, untrashStartWords(b.Name, taskFailedError(op, err)))
		}
	}
	if err := s.k.Step(ctx, op, snapshots.StepRecord); err != nil {
		return UntrashResult{}, err
	}
	err = store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		if err := s.st.TrashForget(ctx, tx, b.ID); err != nil {
			return err
		}
		if r.FinalSnapshot != nil {
			// It joins the box's history as an automatic snapshot, thinned
			// as the others (moatbox: "Snapshot taken at delete").
			if err := s.st.HistoryMarkAutomatic(ctx, tx, *r.FinalSnapshot); err != nil {
				return err
			}
		}
		return s.st.CoreBoxSetState(ctx, tx, db.CoreBoxSetStateParams{ID: b.ID, State: string(snapshots.BoxReady)})
	})
	if err != nil {
		return UntrashResult{}, fmt.Errorf("restore %s from the trash: %w", b.Name, err)
	}
	s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvUntrashed, snapshots.CallerOf(op), LogUntrashedWords(r.WasRunning), "", op.ID, nil)
	return UntrashResult{Box: b.ID, Started: r.WasRunning}, nil
}

// untrashFailed ends a restore from the trash that did not finish: the box
// stays in the trash, and the person can try again or empty it.
func (s *Boxes) untrashFailed(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, words string) error {
	ctx = context.WithoutCancel(ctx)
	if err := s.st.CoreBoxSetState(ctx, s.st.Pool, db.CoreBoxSetStateParams{ID: b.ID, State: string(snapshots.BoxTrashed)}); err != nil {
		return fmt.Errorf("restore of %s from the trash stopped: %w", b.Name, err)
	}
	words = untrashUnfinishedWords(words)
	s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvReleaseStopped, snapshots.CallerOf(op), words, "", op.ID, nil)
	return s.k.End(ctx, op, snapshots.OpFailed, words, observedStillInTrash)
}

// threadOf is the thread of an agent caller, nil for anyone else.
func threadOf(c snapshots.Caller) *string {
	if c.Kind == snapshots.CallerAgent {
		t := c.Thread
		return &t
	}
	return nil
}
