package boxes

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// keepsAsHeldCopy reports whether the box's backend keeps a snapshot past a
// release as a held copy, and its copier.
func keepsAsHeldCopy(be snapshots.Backend, kind string) (providers.HeldCopier, bool) {
	hc, ok := be.Snap.(providers.HeldCopier)
	snapping := be.Snap.Snapshotting(kind)
	return hc, ok && snapping != nil && snapping.KeepsPastRelease == providers.KeepsHeldCopy
}

// holdKept makes the held copy of each kept snapshot of the box, its earlier
// guest's included, before the release deletes a guest, so that a kept snapshot outlives its
// box. With
// p.DeleteKept, each kept snapshot not yet copied is unkept and deleted
// instead. A copy that cannot be made answers a *copyFailedError and
// nothing kept is deleted.
func (s *Boxes) holdKept(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, be snapshots.Backend, p releaseParams) error {
	hc, ok := keepsAsHeldCopy(be, b.Kind)
	if !ok {
		return nil
	}
	all, err := s.k.SnapshotsOfBox(ctx, s.st.Pool, b.ID)
	if err != nil {
		return err
	}
	if p.DeleteKept && op.Step == snapshots.StepUnkeepDelete {
		// The job snoozed on an unkept snapshot's delete, or its worker
		// stopped: that delete is finished first, in the person's words.
		if _, err := s.del.FinishLeftDeletes(ctx, op, b, be, all, func(sn *snapshots.Snapshot) bool { return !sn.Kept() && sn.Guest != "held-copy" },
			snapshots.CallerOf(op), unkeptWhy); err != nil {
			return err
		}
	}
	for _, sn := range all {
		if !sn.Kept() || sn.Guest == "held-copy" {
			continue
		}
		if p.DeleteKept {
			if err := s.unkeepAndDelete(ctx, op, sn, b, be); err != nil {
				if operations.Pending(err) {
					return err
				}
				return &copyFailedError{words: releaseCouldNotDeleteWords(sn.Name, snapshots.TaskFailedWords(op, err.Error()))}
			}
			op.TaskEnded = nil // the task waited for was this delete's: the next snooze on their own
			continue
		}
		if err := s.holdCopy(ctx, op, sn, b, be, hc); err != nil {
			return err
		}
	}
	return nil
}

// unkeptWhy is the box log's why for a snapshot "Release and delete it"
// deleted.
const unkeptWhy = "its box was released, at the person's word"

// unkeepAndDelete stops keeping sn, on its label first, then deletes it,
// its step recorded first: the delete's task is left to the job's snooze
// (operations.ErrTaskPending), and holdKept, resumed, finishes it.
func (s *Boxes) unkeepAndDelete(ctx context.Context, op *snapshots.Operation, sn *snapshots.Snapshot, b *snapshots.Box, be snapshots.Backend) error {
	if err := s.k.Step(ctx, op, snapshots.StepUnkeepDelete); err != nil {
		return err
	}
	if l, ok := be.Snap.(providers.Labeler); ok && sn.Ref != "" {
		if err := l.SetKeptUntil(ctx, snapshots.RefOf(sn, b), nil); err != nil && !errors.Is(err, providers.ErrNotFound) {
			return err
		}
	}
	if err := s.st.CoreSnapshotKeep(ctx, s.st.Pool, db.CoreSnapshotKeepParams{ID: sn.ID}); err != nil {
		return fmt.Errorf("record unkeep of %s: %w", sn.ID, err)
	}
	s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvSnapshotUnkept, snapshots.CallerOf(op), snapshots.LogUnkeptWords(sn.Name, true), sn.ID, op.ID, nil)
	return s.del.DeleteStep(ctx, op, sn, b, be, snapshots.CallerOf(op), unkeptWhy)
}

// holdCopy makes one kept snapshot's held copy: room first (a take's rule,
// with the copy's size), then clone, disarm and template, each recorded
// before it runs; then the record says where the snapshot lives now. No
// ceiling is checked: the copy keeps its snapshot's record, price and size,
// so it replaces its snapshot in the paid rate and adds nothing to it: a
// release checks no ceiling; no backend that makes held copies charges
// yet.
func (s *Boxes) holdCopy(ctx context.Context, op *snapshots.Operation, sn *snapshots.Snapshot, b *snapshots.Box, be snapshots.Backend, hc providers.HeldCopier) error {
	fail := func(why string) error {
		return &copyFailedError{words: CopyFailedWords(sn.Name, why)}
	}
	if sn.State != snapshots.StateReady {
		return fail(copyIsWords(snapshots.StateWords(sn.State)))
	}
	if sn.ForkSafe == nil {
		// A copy of what could never fork is never made: it could
		// never be restored as a box of its own.
		return fail(strings.TrimSuffix(providers.NoResetWords(b.Name), "."))
	}
	ref := snapshots.RefOf(sn, b)
	// The job snoozed on this copy's clone, which ended OK: the copy it
	// made is gone on with (cloned), not made again.
	clone := providers.HeldCopyClone
	if op.Step == snapshots.StepCopyClone && snapshots.StepTaskDone(op) {
		clone = providers.HeldCopyCloned
	}
	if err := s.k.Step(ctx, op, snapshots.StepCopyClone); err != nil {
		return err
	}
	if why, err := s.copyRoom(ctx, b, be, ref); err != nil {
		return err
	} else if why != "" {
		return fail(why)
	}
	at := sn.TakenAt
	label := providers.Label{Install: s.k.Install(), Box: b.ID, Snapshot: sn.ID, KeptUntil: sn.KeptUntil, ResetVersion: *sn.ForkSafe,
		Held: sn.Ref, SnapshotAt: &at, Kind: b.Kind}
	// The clone's and the template's tasks are waited for by the job's
	// snooze: the release resumes here (a copy already a template is used
	// as it is).
	rec := s.k.TaskRecorder(op)
	prog, err := hc.HoldCopy(ctx, ref, label, clone, rec)
	if prog.Remade {
		// Said before the job snoozes on the new clone.
		s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvHeldCopyStarted, snapshots.System("a held copy is never trusted before it is a template"),
			LogHeldCopyRemadeWords(sn.Name), sn.ID, op.ID, nil)
	}
	if operations.Pending(err) {
		return err
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fail(snapshots.Reason(err))
	}
	cp := *prog.Copy
	if !prog.Template {
		for _, st := range []struct {
			step string
			hc   providers.HeldCopyStep
		}{{snapshots.StepCopyDisarm, providers.HeldCopyDisarm}, {snapshots.StepCopyTemplate, providers.HeldCopyTemplate}} {
			if err := s.k.Step(ctx, op, st.step); err != nil {
				return err
			}
			if _, err := hc.HoldCopy(ctx, cp, label, st.hc, rec); err != nil {
				if operations.Pending(err) {
					return err
				}
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return fail(snapshots.Reason(err))
			}
		}
	}
	op.TaskEnded = nil // the task waited for was this copy's: the next copies snooze on their own
	if err := s.st.HeldSetCopy(ctx, s.st.Pool, db.HeldSetCopyParams{ID: sn.ID, GuestRef: cp.Guest.Ref, Host: cp.Guest.Host}); err != nil {
		return fmt.Errorf("record the held copy of %s: %w", sn.ID, err)
	}
	words := LogHeldCopyMadeWords(sn.Name, cp.Guest.Ref, cp.Guest.Host, sn.Holds == string(providers.HoldsDiskAndMemory))
	s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvHeldCopyMade, snapshots.CallerOf(op), words, sn.ID, op.ID, nil)
	return nil
}

// copyRoom says why a held copy does not fit on its storage, or "": a
// held copy's room is a take's, sized as the plan's Keep says.
func (s *Boxes) copyRoom(ctx context.Context, b *snapshots.Box, be snapshots.Backend, ref providers.SnapshotRef) (string, error) {
	st, err := s.k.Settings(ctx)
	if err != nil {
		return "", err
	}
	plan, err := be.Snap.PlanSnapshots(ctx, ref.Guest, nil)
	var locked *providers.LockedError
	if err != nil && !errors.As(err, &locked) {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return copyNoStorageWords(snapshots.Reason(err)), nil
	}
	if plan.Keep.Bytes == nil || plan.Storage.FreeBytes <= 0 && plan.Storage.PercentFull <= 0 {
		return "", nil
	}
	need := *plan.Keep.Bytes
	full := plan.Storage.PercentFull
	total := float64(plan.Storage.FreeBytes)
	if full < 100 {
		total = float64(plan.Storage.FreeBytes) / (1 - full/100)
	}
	// What boxsnap may use: the room below "Refuse new snapshots when a
	// host's storage is past".
	room := int64(total*float64(st.RoomPercent)/100 - total*full/100)
	if room < 0 {
		room = 0
	}
	if need <= room {
		return "", nil
	}
	host := ref.Guest.Host
	if host == "" {
		host = b.Host
	}
	if host == "" {
		// A backend of one host (QEMU) names none: its own name stands.
		host = be.Label
	}
	return copyRoomWords(host, room, need), nil
}

// releaseStopped ends a release that stopped before any guest went: the box
// is ready again, so the person can Release again or "Release and delete
// it", and the box log says why.
func (s *Boxes) releaseStopped(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, words string) error {
	state := snapshots.BoxReady
	if _, err := s.k.TrashRow(ctx, s.st.Pool, b.ID); err == nil {
		state = snapshots.BoxTrashed // emptying the trash stopped: the box waits there again
	}
	if err := s.st.CoreBoxSetState(context.WithoutCancel(ctx), s.st.Pool, db.CoreBoxSetStateParams{ID: b.ID, State: string(state)}); err != nil {
		return fmt.Errorf("release of %s stopped: %w", b.Name, err)
	}
	s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvReleaseStopped, snapshots.CallerOf(op), logReleaseStoppedWords(words), "", op.ID, nil)
	return s.k.End(ctx, op, snapshots.OpFailed, words, observedNothingKeptGone)
}

// releaseEarlier deletes the box's earlier guests at its release, after
// their kept snapshots' held copies are made, with the snapshots left on
// them: an earlier guest is deleted at the box's release.
func (s *Boxes) releaseEarlier(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, be snapshots.Backend) error {
	all, err := s.k.SnapshotsOfBox(ctx, s.st.Pool, b.ID)
	if err != nil {
		return err
	}
	done := map[string]bool{}
	for _, sn := range all {
		if sn.Guest != "earlier" || sn.GuestRef == nil {
			continue
		}
		ref := *sn.GuestRef
		if !done[ref] {
			// Its stop's and destroy's tasks are waited for by the job's
			// snooze: the release resumes at its step, and an earlier guest
			// gone already is released (its records go).
			g := snapshots.RefOf(sn, b).Guest
			if err := s.k.ReleaseGuest(ctx, be, g, s.k.TaskRecorder(op)); err != nil {
				if operations.Pending(err) {
					return err
				}
				return fmt.Errorf("delete %s's earlier guest %s: %w", b.Name, ref, err)
			}
			done[ref] = true
		}
		if err := s.st.CoreSnapshotDelete(ctx, s.st.Pool, sn.ID); err != nil {
			return fmt.Errorf("remove the record of %s: %w", sn.ID, err)
		}
		s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvSnapshotDeleted, snapshots.System("its box was released"),
			LogDeletedWithEarlierWords(sn.Name, sn.ID, b.Name), sn.ID, op.ID, nil)
	}
	return nil
}

// ReleaseStopped answers the words of the box's last release when it
// stopped because a held copy could not be made, or "": the release page
// then offers Release again and "Release and delete it".
func (s *Boxes) ReleaseStopped(ctx context.Context, c snapshots.Caller, boxRef string) (string, error) {
	b, err := s.k.Box(ctx, c, boxRef)
	if err != nil {
		return "", err
	}
	if b.State != snapshots.BoxReady && b.State != snapshots.BoxTrashed {
		return "", nil
	}
	op, err := snapshots.OperationRow(s.st.HeldLastRelease(ctx, s.st.Pool, b.ID))
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if op.State != snapshots.OpFailed || op.Error == nil || !isCopyFailed(*op.Error) {
		return "", nil
	}
	return *op.Error + ".", nil
}
