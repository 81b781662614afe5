package snapshots

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// Steps of a held copy, each recorded before it runs (section 2, "A held
// copy"). A release cut short at any of them makes that copy again from its
// clone step, which uses a copy already a template and remakes one that is
// not: a copy that is not yet a template is never trusted.
const (
	StepCopyClone    = "copy-clone"
	StepCopyDisarm   = "copy-disarm"
	StepCopyTemplate = "copy-template"
	// StepUnkeepDelete is "Release and delete it"'s: a kept snapshot stops
	// being kept and is deleted, its task left to the job's snooze.
	StepUnkeepDelete = "unkeep-delete"
)

// EvReleaseStopped is the box log's event for a release that stopped before
// any guest went.
const EvReleaseStopped = "release-stopped"

// releaseParams are a release's parameters on its operation.
type releaseParams struct {
	// DeleteKept is the person's "Release and delete it": each kept snapshot
	// not yet copied stops being kept, at the person's word, and goes with
	// the box; held copies made already stay kept (unit 8).
	DeleteKept bool `json:"deleteKept,omitempty"`
	// Trash moves the box to the trash instead (trash.go); Empty releases a
	// box in the trash.
	Trash bool `json:"trash,omitempty"`
	Empty bool `json:"empty,omitempty"`
}

// copyFailedError is a held copy that could not be made: the release stops
// with its words (section 7, "Keep is confirmed only when it will last").
type copyFailedError struct{ words string }

func (e *copyFailedError) Error() string { return e.words }

// keepsAsHeldCopy reports whether the box's backend keeps a snapshot past a
// release as a held copy, and its copier.
func keepsAsHeldCopy(be Backend, kind string) (providers.HeldCopier, bool) {
	hc, ok := be.Snap.(providers.HeldCopier)
	snapping := be.Snap.Snapshotting(kind)
	return hc, ok && snapping != nil && snapping.KeepsPastRelease == providers.KeepsHeldCopy
}

// holdKept makes the held copy of each kept snapshot of the box, its earlier
// guest's included, before the release deletes a guest (section 7). With
// p.DeleteKept, each kept snapshot not yet copied is unkept and deleted
// instead. A copy that cannot be made answers a *copyFailedError and
// nothing kept is deleted.
func (s *Boxes) holdKept(ctx context.Context, op *Operation, b *Box, be Backend, p releaseParams) error {
	hc, ok := keepsAsHeldCopy(be, b.Kind)
	if !ok {
		return nil
	}
	all, err := s.snapshotsOfBox(ctx, s.st.Pool, b.ID)
	if err != nil {
		return err
	}
	if p.DeleteKept && op.Step == StepUnkeepDelete {
		// The job snoozed on an unkept snapshot's delete, or its worker
		// stopped: that delete is finished first, in the person's words.
		if _, err := s.snaps.finishLeftDeletes(ctx, op, b, be, all, func(sn *Snapshot) bool { return !sn.Kept() && sn.Guest != "held-copy" },
			CallerOf(op), unkeptWhy); err != nil {
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
				return &copyFailedError{words: wordsReleaseCouldNotDelete(sn.Name, TaskFailedWords(op, err.Error()))}
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
func (s *Boxes) unkeepAndDelete(ctx context.Context, op *Operation, sn *Snapshot, b *Box, be Backend) error {
	if err := s.Step(ctx, op, StepUnkeepDelete); err != nil {
		return err
	}
	if l, ok := be.Snap.(providers.Labeler); ok && sn.Ref != "" {
		if err := l.SetKeptUntil(ctx, RefOf(sn, b), nil); err != nil && !errors.Is(err, providers.ErrNotFound) {
			return err
		}
	}
	if err := s.st.CoreSnapshotKeep(ctx, s.st.Pool, db.CoreSnapshotKeepParams{ID: sn.ID}); err != nil {
		return fmt.Errorf("record unkeep of %s: %w", sn.ID, err)
	}
	s.Log(ctx, s.st.Pool, b.ID, EvSnapshotUnkept, CallerOf(op), logUnkeptWords(sn.Name, true), sn.ID, op.ID, nil)
	return s.snaps.deleteStep(ctx, op, sn, b, be, CallerOf(op), unkeptWhy)
}

// holdCopy makes one kept snapshot's held copy: room first (a take's rule,
// with the copy's size), then clone, disarm and template, each recorded
// before it runs; then the record says where the snapshot lives now. No
// ceiling is checked: the copy keeps its snapshot's record, price and size,
// so it replaces its snapshot in the paid rate and adds nothing to it
// (unit 8, "a release checks no ceiling"); no backend that makes held copies
// charges yet.
func (s *Boxes) holdCopy(ctx context.Context, op *Operation, sn *Snapshot, b *Box, be Backend, hc providers.HeldCopier) error {
	fail := func(why string) error { return &copyFailedError{words: CopyFailedWords(sn.Name, why)} }
	if sn.State != StateReady {
		return fail(copyIsWords(StateWords(sn.State)))
	}
	if sn.ForkSafe == nil {
		// A copy of what could never fork is never made (unit 8).
		return fail(strings.TrimSuffix(providers.NoResetWords(b.Name), "."))
	}
	ref := RefOf(sn, b)
	// The job snoozed on this copy's clone, which ended OK: the copy it
	// made is gone on with (cloned), not made again.
	clone := providers.HeldCopyClone
	if op.Step == StepCopyClone && stepTaskDone(op) {
		clone = providers.HeldCopyCloned
	}
	if err := s.Step(ctx, op, StepCopyClone); err != nil {
		return err
	}
	if why, err := s.copyRoom(ctx, b, be, ref); err != nil {
		return err
	} else if why != "" {
		return fail(why)
	}
	at := sn.TakenAt
	label := providers.Label{Install: s.install, Box: b.ID, Snapshot: sn.ID, KeptUntil: sn.KeptUntil, ResetVersion: *sn.ForkSafe,
		Held: sn.Ref, SnapshotAt: &at, Kind: b.Kind}
	// The clone's and the template's tasks are waited for by the job's
	// snooze: the release resumes here (a copy already a template is used
	// as it is).
	rec := s.snaps.TaskRecorder(op)
	prog, err := hc.HoldCopy(ctx, ref, label, clone, rec)
	if prog.Remade {
		// Said before the job snoozes on the new clone.
		s.Log(ctx, s.st.Pool, b.ID, EvHeldCopyStarted, System("a held copy is never trusted before it is a template"),
			logHeldCopyRemadeWords(sn.Name), sn.ID, op.ID, nil)
	}
	if operations.Pending(err) {
		return err
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fail(reason(err))
	}
	cp := *prog.Copy
	if !prog.Template {
		for _, st := range []struct {
			step string
			hc   providers.HeldCopyStep
		}{{StepCopyDisarm, providers.HeldCopyDisarm}, {StepCopyTemplate, providers.HeldCopyTemplate}} {
			if err := s.Step(ctx, op, st.step); err != nil {
				return err
			}
			if _, err := hc.HoldCopy(ctx, cp, label, st.hc, rec); err != nil {
				if operations.Pending(err) {
					return err
				}
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return fail(reason(err))
			}
		}
	}
	op.TaskEnded = nil // the task waited for was this copy's: the next copies snooze on their own
	if err := s.st.HeldSetCopy(ctx, s.st.Pool, db.HeldSetCopyParams{ID: sn.ID, GuestRef: cp.Guest.Ref, Host: cp.Guest.Host}); err != nil {
		return fmt.Errorf("record the held copy of %s: %w", sn.ID, err)
	}
	words := logHeldCopyMadeWords(sn.Name, cp.Guest.Ref, cp.Guest.Host, sn.Holds == string(providers.HoldsDiskAndMemory))
	s.Log(ctx, s.st.Pool, b.ID, EvHeldCopyMade, CallerOf(op), words, sn.ID, op.ID, nil)
	return nil
}

// copyRoom says why a held copy does not fit on its storage, or "": a
// held copy's room is a take's, sized as the plan's Keep says (unit 8).
func (s *Boxes) copyRoom(ctx context.Context, b *Box, be Backend, ref providers.SnapshotRef) (string, error) {
	st, err := s.Settings(ctx)
	if err != nil {
		return "", err
	}
	plan, err := be.Snap.PlanSnapshots(ctx, ref.Guest, nil)
	var locked *providers.LockedError
	if err != nil && !errors.As(err, &locked) {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return copyNoStorageWords(reason(err)), nil
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
	return copyRoomWords(host, room, need), nil
}

// reason is an error's words for a person, as a refusal says them.
func reason(err error) string {
	if r, ok := AsRefusal(err); ok {
		return r.Words
	}
	var pr *providers.RefusedError
	if errors.As(err, &pr) {
		return pr.Why
	}
	return err.Error()
}

// releaseStopped ends a release that stopped before any guest went: the box
// is ready again, so the person can Release again or "Release and delete
// it", and the box log says why.
func (s *Boxes) releaseStopped(ctx context.Context, op *Operation, b *Box, words string) error {
	state := BoxReady
	if _, err := s.trashRow(ctx, s.st.Pool, b.ID); err == nil {
		state = BoxTrashed // emptying the trash stopped: the box waits there again
	}
	if err := s.st.CoreBoxSetState(context.WithoutCancel(ctx), s.st.Pool, db.CoreBoxSetStateParams{ID: b.ID, State: string(state)}); err != nil {
		return fmt.Errorf("release of %s stopped: %w", b.Name, err)
	}
	s.Log(ctx, s.st.Pool, b.ID, EvReleaseStopped, CallerOf(op), logReleaseStoppedWords(words), "", op.ID, nil)
	return s.Finish(ctx, op, OpFailed, nil, words, observedNothingKeptGone)
}

// releaseEarlier deletes the box's earlier guests at its release, after
// their kept snapshots' held copies are made, with the snapshots left on
// them (section 2: "it is deleted ... at the box's release").
func (s *Boxes) releaseEarlier(ctx context.Context, op *Operation, b *Box, be Backend) error {
	all, err := s.snapshotsOfBox(ctx, s.st.Pool, b.ID)
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
			g := RefOf(sn, b).Guest
			if err := s.releaseGuest(ctx, be, g, s.snaps.TaskRecorder(op)); err != nil {
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
		s.Log(ctx, s.st.Pool, b.ID, EvSnapshotDeleted, System("its box was released"),
			logDeletedWithEarlierWords(sn.Name, sn.ID, b.Name), sn.ID, op.ID, nil)
	}
	return nil
}

// preferHeld says whether a listing's h stands for its snapshot before prev,
// the same snapshot listed elsewhere: a copy is never trusted over its
// source, so a held copy that is not a template loses to the snapshot it was
// made from (unit 8), and the first complete one listed stays.
func PreferHeld(h, prev providers.HeldSnapshot) bool {
	return prev.Incomplete && !h.Incomplete
}

// ReleaseStopped answers the words of the box's last release when it
// stopped because a held copy could not be made, or "": the release page
// then offers Release again and "Release and delete it" (section 7).
func (s *Boxes) ReleaseStopped(ctx context.Context, c Caller, boxRef string) (string, error) {
	b, err := s.Box(ctx, c, boxRef)
	if err != nil {
		return "", err
	}
	if b.State != BoxReady && b.State != BoxTrashed {
		return "", nil
	}
	op, err := operationRow(s.st.HeldLastRelease(ctx, s.st.Pool, b.ID))
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if op.State != OpFailed || op.Error == nil || !isCopyFailed(*op.Error) {
		return "", nil
	}
	return *op.Error + ".", nil
}
