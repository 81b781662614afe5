package fork

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
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

// Fork admits a fork in the source box's order: the source's take, restore
// and release wait for it, and its snapshot stays pinned until the fork is
// ready or failed. Its job goes on the queue of the host it is asked on,
// where the new box lands, even when another host owns the source box
// (another.go).
func (s *Forks) Fork(ctx context.Context, c snapshots.Caller, req ForkRequest) (*snapshots.Operation, error) {
	if op, err := s.k.Repeated(ctx, c, req.RequestID, snapshots.OpFork, req.Box, req.Snapshot); err != nil || op != nil {
		return op, err
	}
	sn, b, err := s.k.SnapshotOfBox(ctx, c, req.Box, req.Snapshot)
	if err != nil {
		return nil, err
	}
	if err := snapshots.MayAct(c, snapshots.ActFork, b, sn); err != nil {
		return nil, err
	}
	if op, err := s.k.ExistingRequest(ctx, s.st.Pool, c, req.RequestID, snapshots.OpFork, &sn.ID); err != nil || op != nil {
		return op, err
	}
	name := strings.TrimSpace(req.Name)
	if name == "" {
		name = s.ForkName(ctx, b.Name)
	} else if err := snapshots.CheckBoxName(name); err != nil {
		return nil, err
	}
	if err := s.NameFree(ctx, c, name); err != nil {
		return nil, err
	}
	ops, err := s.admitForks(ctx, c, b, sn, forks{names: []string{name}, requestID: func(int) string { return req.RequestID },
		asMachine: req.AsMachine, snapRef: req.Snapshot})
	if err != nil {
		return nil, err
	}
	return ops[0], nil
}

// ForkName is the name a fork of box gets when none is given: "amber-fox-
// fork", then "amber-fox-fork-2" and on, the first no box has.
func (s *Forks) ForkName(ctx context.Context, box string) string {
	name := box + "-fork"
	for i := 2; ; i++ {
		if _, err := s.k.BoxByName(ctx, name); errors.Is(err, store.ErrNotFound) {
			return name
		}
		name = fmt.Sprintf("%s-fork-%d", box, i)
	}
}

// runFork makes the new box from the snapshot, records it and starts it.
// The new box's ID is fixed at admission, so a resumed fork finds the guest
// a restart cut short and goes on with it rather than copying again.
func (s *Forks) runFork(ctx context.Context, op *snapshots.Operation, p ForkParams) (ForkResult, error) {
	sn, err := s.k.SnapshotByID(ctx, s.st.Pool, snapshots.PinTarget(op))
	if err != nil {
		return ForkResult{}, s.k.End(ctx, op, snapshots.OpFailed, snapshots.FailSnapshotGone, "")
	}
	src, err := s.k.BoxByID(ctx, s.st.Pool, sn.BoxID)
	if err != nil {
		return ForkResult{}, err
	}
	be, err := s.k.Backend(src.BackendID)
	if err != nil {
		return ForkResult{}, s.k.End(ctx, op, snapshots.OpFailed, err.Error(), "")
	}
	caller := snapshots.CallerOf(op)
	fail := func(words string) error {
		s.k.Log(ctx, s.st.Pool, src.ID, snapshots.EvForkFailed, caller, logForkFailedWords(sn.Name, p.Name, words), sn.ID, op.ID, nil)
		return s.k.End(ctx, op, snapshots.OpFailed, words, "")
	}
	if err := s.k.Step(ctx, op, "fork"); err != nil {
		return ForkResult{}, err
	}
	box, err := s.k.BoxByID(ctx, s.st.Pool, p.BoxID)
	if errors.Is(err, store.ErrNotFound) {
		identity := providers.BoxIdentity{ID: p.BoxID, Name: p.Name, Kind: src.Kind, Install: s.install, Secrets: s.k.Secrets(ctx)}
		guest := providers.Guest{Backend: src.BackendID, Kind: src.Kind, Host: src.Host, Ref: p.BoxID}
		st, serr := be.Boxes.Status(ctx, guest)
		if serr != nil || !st.Exists {
			// The clone's task is waited for by the job's snooze: the fork
			// resumes here, and the backend goes on with the guest it cloned.
			guest, err = s.forkSnapshot(ctx, be, sn, src, identity, s.k.TaskRecorder(op))
			if operations.Pending(err) {
				return ForkResult{}, err
			}
			if err != nil {
				if ctx.Err() != nil {
					return ForkResult{}, ctx.Err()
				}
				return ForkResult{}, fail(backendFailedWords(err))
			}
		}
		from, err := json.Marshal(map[string]any{"box": src.ID, "boxName": src.Name, "snapshot": sn.ID, "snapshotName": sn.Name, "takenAt": sn.TakenAt})
		if err != nil {
			return ForkResult{}, fmt.Errorf("record fork %s: %w", p.Name, err)
		}
		box, err = snapshots.BoxRow(s.st.CoreBoxInsertFork(ctx, s.st.Pool, db.CoreBoxInsertForkParams{ID: p.BoxID, Name: p.Name, Kind: src.Kind,
			ThreadID: p.Thread, BackendID: src.BackendID, Host: guest.Host, GuestRef: guest.Ref, ForkedFrom: from,
			// A fork of a desktop is a desktop; its screen's address is its
			// own, unknown until an app runs in it.
			HasScreen: src.HasScreen, OwnerHost: s.k.OwnerFor(be)}))
		if err != nil {
			_ = be.Boxes.Release(context.WithoutCancel(ctx), guest)
			if words := s.nameTakenWords(ctx, caller, p.Name); words != "" {
				return ForkResult{}, fail(words)
			}
			return ForkResult{}, fail(failForkRecordWords(p.Name, err))
		}
		s.k.SetHead(ctx, s.st.Pool, box.ID, sn.ID)
		box.HeadID = &sn.ID
		tz := s.k.TimeZone(ctx)
		s.k.Log(ctx, s.st.Pool, box.ID, snapshots.EvMade, caller, logForkedFromWords(src.Name, sn.Name, sn.TakenAt, tz), "", op.ID, nil)
	} else if err != nil {
		return ForkResult{}, err
	}
	if err := s.armAndStart(ctx, op, be, box, snapshots.RefOf(sn, src)); err != nil {
		if operations.Pending(err) {
			return ForkResult{}, err // the job snoozes on the start's task; the fork resumes with its box
		}
		if ctx.Err() != nil {
			return ForkResult{}, ctx.Err()
		}
		return ForkResult{}, fail(snapshots.Reason(err))
	}
	tz := s.k.TimeZone(ctx)
	from := fmt.Sprintf("forked from %s at %s", src.Name, sn.TakenAt.In(tz).Format("15:04"))
	s.k.Log(ctx, s.st.Pool, src.ID, snapshots.EvForked, caller, logForkWords(sn.Name, box.Name), sn.ID, op.ID, nil)
	return ForkResult{Box: box.ID, Name: box.Name, From: from}, nil
}

// forkSnapshot asks be for the new guest from sn, a snapshot of src: on a
// host other than the one owning src, which holds no run of it, with src's
// environment as the database recorded it (carrier, through
// providers.CarriedFork), so the fork runs with it there as on src's own
// host; on src's own host (or where no host owns it) be's ForkSnapshot,
// which reads src's run where it is.
func (s *Forks) forkSnapshot(ctx context.Context, be snapshots.Backend, sn *snapshots.Snapshot, src *snapshots.Box, identity providers.BoxIdentity, rec providers.Recorder) (providers.Guest, error) {
	cf, ok := be.Snap.(providers.CarriedFork)
	owner, err := s.owner(ctx, src)
	if err != nil {
		return providers.Guest{}, err
	}
	if !ok || s.carrier == nil || owner == "" || owner == s.host {
		return be.Snap.ForkSnapshot(ctx, snapshots.RefOf(sn, src), identity, rec)
	}
	env, err := s.carrier.CarriedEnv(ctx, src)
	if err != nil {
		return providers.Guest{}, err
	}
	return cf.ForkSnapshotCarried(ctx, snapshots.RefOf(sn, src), identity, env, rec)
}
