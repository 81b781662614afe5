package restore

import (
	"context"
	"errors"
	"fmt"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// TakeHeldUndo takes a ZFS restore's undo: the held copy of the stopped
// guest, recorded as this restore's undo, which lives in the copy and is
// undone by a swap. Its steps, clone, disarm and template, are each recorded
// before they run; a restart at any of them makes the copy again from its
// clone step, which uses a copy already a template and never trusts one that
// is not.
func (s *undoTaker) TakeHeldUndo(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, be snapshots.Backend, resuming bool) (*snapshots.Snapshot, error) {
	hc, ok := be.Snap.(providers.HeldCopier)
	if !ok {
		return nil, fmt.Errorf("%s makes no held copies: %w", be.Label, providers.ErrUnsupported)
	}
	undo, err := s.RecordUndo(ctx, op, b, be)
	if err != nil || undo.State == snapshots.StateReady {
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
	if op.Step == snapshots.StepCopyClone && snapshots.StepTaskDone(op) {
		clone = providers.HeldCopyCloned
	}
	source := providers.SnapshotRef{ID: undo.ID, Guest: snapshots.GuestOf(b)}
	if err := s.Step(ctx, op, snapshots.StepCopyClone); err != nil {
		return nil, err
	}
	prog, err := hc.HoldCopy(ctx, source, label, clone, rec)
	if err == nil && !prog.Template {
		for _, st := range []struct {
			step string
			hc   providers.HeldCopyStep
		}{{snapshots.StepCopyDisarm, providers.HeldCopyDisarm}, {snapshots.StepCopyTemplate, providers.HeldCopyTemplate}} {
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
		state := snapshots.StateFailed
		if errors.Is(err, providers.ErrIncomplete) {
			state = snapshots.StateIncomplete
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
	if err := s.MarkTaken(ctx, undo, taken, s.now().Sub(start), &snapshots.TakenEvent{Caller: snapshots.CallerOf(op), Op: op.ID,
		Words: LogHeldUndoTakenWords(undo.Name, undo.ID, cp.Ref, cp.Host)}); err != nil {
		return nil, err
	}
	undo.State = snapshots.StateReady
	return undo, nil
}
