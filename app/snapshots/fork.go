package snapshots

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// ForkRequest asks for a new box from a snapshot.
type ForkRequest struct {
	Box      string
	Snapshot string
	// Name is the new box's name; empty makes one.
	Name string
	// AsMachine makes the fork one of the person's machines (the person's
	// choice, "As one of your machines"); an agent's fork is always its own
	// thread's.
	AsMachine bool
	RequestID string
}

// ForkParams are a fork's parameters on its operation: the new box's name
// and ID, fixed at admission, and its thread.
type ForkParams struct {
	Name   string  `json:"name"`
	BoxID  string  `json:"boxId"`
	Thread *string `json:"thread,omitempty"`
}

// ForkResult is what a finished fork answers.
type ForkResult struct {
	Box  string `json:"box"`
	Name string `json:"name"`
	From string `json:"from"` // "forked from amber-fox at 10:42"
}

// Fork admits a fork on the source box's queue: the source's take, restore
// and release wait for it, and its snapshot stays pinned until the fork is
// ready or failed.
func (s *Service) Fork(ctx context.Context, c Caller, req ForkRequest) (*Operation, error) {
	if op, err := s.Repeated(ctx, c, req.RequestID, OpFork, req.Box, req.Snapshot); err != nil || op != nil {
		return op, err
	}
	sn, b, err := s.SnapshotOfBox(ctx, c, req.Box, req.Snapshot)
	if err != nil {
		return nil, err
	}
	if err := MayAct(c, ActFork, b, sn); err != nil {
		return nil, err
	}
	if op, err := s.ExistingRequest(ctx, s.st.Pool, c, req.RequestID, OpFork, &sn.ID); err != nil || op != nil {
		return op, err
	}
	name := strings.TrimSpace(req.Name)
	if name == "" {
		name = s.ForkName(ctx, b.Name)
	} else if err := CheckBoxName(name); err != nil {
		return nil, err
	}
	if existing, err := s.BoxByName(ctx, name); err == nil && existing.State != BoxReleased {
		return nil, refusal(CodeConflict, BoxExistsWords(name))
	}
	var thread *string
	switch {
	case c.Kind == CallerAgent:
		t := c.Thread
		thread = &t
	case req.AsMachine || b.State == BoxReleased || sn.Kept() && b.State != BoxReady:
		thread = nil // a kept snapshot of a released box forks as one of the person's machines
	default:
		thread = b.ThreadID
	}
	be, err := s.Backend(b.BackendID)
	if err != nil {
		return nil, err
	}
	// Refused in the core's words before asking the backend.
	if err := Eligible(sn, ChangeFork, nil, s.now(), s.TimeZone(ctx)); err != nil {
		return nil, err
	}
	// A released box has no guest to plan on: its kept snapshot forks as
	// it is, and the backend's fork says if it cannot.
	plan := providers.SnapshotPlan{Fork: providers.ForkPlan{OK: true}}
	if b.State != BoxReleased {
		ref := RefOf(sn, b)
		if plan, err = s.PlanNow(ctx, b, be, &ref); err != nil {
			return nil, s.PlanError(b, be, err)
		}
	}
	if !plan.Fork.OK {
		why := plan.Fork.Why
		if why == "" {
			why = CannotBeForkedWords(sn.Name, "on "+be.Label)
		}
		return nil, refusal(CodePlan, why)
	}
	var op *Operation
	err = store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		b, sn, err := s.ChangeNow(ctx, tx, b.ID, sn.ID, req.Snapshot, ChangeFork)
		if err != nil {
			return err
		}
		if err := s.Unsettled(ctx, tx, b); err != nil {
			return err
		}
		op, err = s.Admit(ctx, tx, OpRequest{Kind: OpFork, Box: b, Target: sn, Pins: []string{sn.ID}, Caller: c,
			RequestID: req.RequestID, Params: ForkParams{Name: name, BoxID: NewID(PrefixBox), Thread: thread}})
		return err
	})
	if err != nil {
		return nil, err
	}
	s.Log(ctx, s.st.Pool, b.ID, EvForkAsked, c, logForkWords(sn.Name, name), sn.ID, op.ID, nil)
	return op, nil
}

// ForkName is the name a fork of box gets when none is given: "amber-fox-
// fork", then "amber-fox-fork-2" and on, the first no box has.
func (s *Service) ForkName(ctx context.Context, box string) string {
	name := box + "-fork"
	for i := 2; ; i++ {
		if _, err := s.BoxByName(ctx, name); errors.Is(err, store.ErrNotFound) {
			return name
		}
		name = fmt.Sprintf("%s-fork-%d", box, i)
	}
}

// runFork makes the new box from the snapshot, records it and starts it.
// The new box's ID is fixed at admission, so a resumed fork finds the guest
// a restart cut short and goes on with it rather than copying again.
func (s *Service) runFork(ctx context.Context, op *Operation, p ForkParams) (ForkResult, error) {
	sn, err := s.SnapshotByID(ctx, s.st.Pool, PinTarget(op))
	if err != nil {
		return ForkResult{}, s.Finish(ctx, op, OpFailed, nil, FailSnapshotGone, "")
	}
	src, err := s.BoxByID(ctx, s.st.Pool, sn.BoxID)
	if err != nil {
		return ForkResult{}, err
	}
	be, err := s.Backend(src.BackendID)
	if err != nil {
		return ForkResult{}, s.Finish(ctx, op, OpFailed, nil, err.Error(), "")
	}
	caller := CallerOf(op)
	fail := func(words string) error {
		s.Log(ctx, s.st.Pool, src.ID, EvForkFailed, caller, logForkFailedWords(sn.Name, p.Name, words), sn.ID, op.ID, nil)
		return s.Finish(ctx, op, OpFailed, nil, words, "")
	}
	if err := s.Step(ctx, op, "fork"); err != nil {
		return ForkResult{}, err
	}
	box, err := s.BoxByID(ctx, s.st.Pool, p.BoxID)
	if errors.Is(err, store.ErrNotFound) {
		identity := providers.BoxIdentity{ID: p.BoxID, Name: p.Name, Kind: src.Kind, Install: s.install, Secrets: s.Secrets(ctx)}
		guest := providers.Guest{Backend: src.BackendID, Kind: src.Kind, Host: src.Host, Ref: p.BoxID}
		st, serr := be.Boxes.Status(ctx, guest)
		if serr != nil || !st.Exists {
			// The clone's task is waited for by the job's snooze: the fork
			// resumes here, and the backend goes on with the guest it cloned.
			guest, err = be.Snap.ForkSnapshot(ctx, RefOf(sn, src), identity, s.TaskRecorder(op))
			if operations.Pending(err) {
				return ForkResult{}, err
			}
			if err != nil {
				if ctx.Err() != nil {
					return ForkResult{}, ctx.Err()
				}
				return ForkResult{}, fail(err.Error())
			}
		}
		from, err := json.Marshal(map[string]any{"box": src.ID, "boxName": src.Name, "snapshot": sn.ID, "snapshotName": sn.Name, "takenAt": sn.TakenAt})
		if err != nil {
			return ForkResult{}, fmt.Errorf("record fork %s: %w", p.Name, err)
		}
		box, err = BoxRow(s.st.CoreBoxInsertFork(ctx, s.st.Pool, db.CoreBoxInsertForkParams{ID: p.BoxID, Name: p.Name, Kind: src.Kind,
			ThreadID: p.Thread, BackendID: src.BackendID, Host: guest.Host, GuestRef: guest.Ref, ForkedFrom: from,
			// A fork of a desktop is a desktop; its screen's address is its
			// own, unknown until an app runs in it.
			HasScreen: src.HasScreen}))
		if err != nil {
			_ = be.Boxes.Release(context.WithoutCancel(ctx), guest)
			return ForkResult{}, fail(failForkRecordWords(p.Name, err))
		}
		s.SetHead(ctx, s.st.Pool, box.ID, sn.ID)
		box.HeadID = &sn.ID
		tz := s.TimeZone(ctx)
		s.Log(ctx, s.st.Pool, box.ID, EvMade, caller, logForkedFromWords(src.Name, sn.Name, sn.TakenAt, tz), "", op.ID, nil)
	} else if err != nil {
		return ForkResult{}, err
	}
	if err := s.armAndStart(ctx, op, be, box, RefOf(sn, src)); err != nil {
		if operations.Pending(err) {
			return ForkResult{}, err // the job snoozes on the start's task; the fork resumes with its box
		}
		if ctx.Err() != nil {
			return ForkResult{}, ctx.Err()
		}
		return ForkResult{}, fail(Reason(err))
	}
	tz := s.TimeZone(ctx)
	from := fmt.Sprintf("forked from %s at %s", src.Name, sn.TakenAt.In(tz).Format("15:04"))
	s.Log(ctx, s.st.Pool, src.ID, EvForked, caller, logForkWords(sn.Name, box.Name), sn.ID, op.ID, nil)
	return ForkResult{Box: box.ID, Name: box.Name, From: from}, nil
}
