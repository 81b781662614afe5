package snapshots

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// IsCopyStep reports whether step is one of a held copy's.
func IsCopyStep(step string) bool { return strings.HasPrefix(step, "copy-") }

func IndexOf(order []providers.RestoreStep, step providers.RestoreStep) int {
	for i, s := range order {
		if s == step {
			return i
		}
	}
	return 0
}

// TakeHeldUndo takes a ZFS restore's undo: the held copy of the stopped
// guest, recorded as this restore's undo, which lives in the copy and is
// undone by a swap. Its steps, clone, disarm and template, are each recorded
// before they run; a restart at any of them makes the copy again from its
// clone step, which uses a copy already a template and never trusts one that
// is not.
func (s *Service) TakeHeldUndo(ctx context.Context, op *Operation, b *Box, be Backend, resuming bool) (*Snapshot, error) {
	hc, ok := be.Snap.(providers.HeldCopier)
	if !ok {
		return nil, fmt.Errorf("%s makes no held copies: %w", be.Label, providers.ErrUnsupported)
	}
	undo, err := s.recordUndo(ctx, op, b, be)
	if err != nil || undo.State == StateReady {
		return undo, err
	}
	start := s.now()
	at := start
	label := providers.Label{Install: s.install, Box: b.ID, Snapshot: undo.ID, Held: "guest", SnapshotAt: &at, Kind: b.Kind}
	// The clone's and the template's tasks are waited for by the job's
	// snooze: the restore resumes at its undo, and goes on with the copy
	// its clone made when that clone's task ended OK (cloned).
	rec := s.TaskRecorder(op)
	clone := providers.HeldCopyClone
	if op.Step == StepCopyClone && StepTaskDone(op) {
		clone = providers.HeldCopyCloned
	}
	source := providers.SnapshotRef{ID: undo.ID, Guest: GuestOf(b)}
	if err := s.Step(ctx, op, StepCopyClone); err != nil {
		return nil, err
	}
	prog, err := hc.HoldCopy(ctx, source, label, clone, rec)
	if err == nil && !prog.Template {
		for _, st := range []struct {
			step string
			hc   providers.HeldCopyStep
		}{{StepCopyDisarm, providers.HeldCopyDisarm}, {StepCopyTemplate, providers.HeldCopyTemplate}} {
			if err = s.Step(ctx, op, st.step); err != nil {
				return nil, err
			}
			if _, err = hc.HoldCopy(ctx, *prog.Copy, label, st.hc, rec); err != nil {
				break
			}
		}
	}
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
	cp := prog.Copy.Guest
	taken := providers.SnapshotTaken{Ref: "guest", Storage: prog.Copy.Storage, CapturedAt: start, Holds: providers.HoldsDisk,
		ResetVersion: prog.ResetVersion}
	// Where the copy is goes first, while the undo is still taking: a kill
	// after it makes the copy again. Then the undo is ready, and its event
	// is written in the same transaction.
	if err := s.st.HeldSetCopy(ctx, s.st.Pool, db.HeldSetCopyParams{ID: undo.ID, GuestRef: cp.Ref, Host: cp.Host}); err != nil {
		return nil, fmt.Errorf("record the held copy of %s: %w", undo.ID, err)
	}
	if err := s.markTaken(ctx, undo, taken, s.now().Sub(start), &TakenEvent{Caller: CallerOf(op), Op: op.ID,
		Words: logHeldUndoTakenWords(undo.Name, undo.ID, cp.Ref, cp.Host)}); err != nil {
		return nil, err
	}
	undo.State = StateReady
	return undo, nil
}
