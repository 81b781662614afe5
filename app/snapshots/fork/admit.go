package fork

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/providers"
)

// forks are one call's forks of one snapshot, for their admission: the
// new boxes' names, each fork's request ID (requestID(i) for the i-th
// name, from 0), and whether they are the person's machines.
type forks struct {
	names     []string
	requestID func(i int) string
	asMachine bool
	// snapRef is the caller's words for the snapshot, for a refusal.
	snapRef string
}

// admitForks admits the forks f of snapshot sn of box b, all or none,
// once the caller may fork it and its names are checked: each fork's
// thread, the snapshot's eligibility and its backend's plan are checked for
// all before any is admitted, then all are admitted in one transaction
// with the box's row locked, and each is logged. One fork or many are
// admitted alike.
func (s *Forks) admitForks(ctx context.Context, c snapshots.Caller, b *snapshots.Box, sn *snapshots.Snapshot, f forks) ([]*snapshots.Operation, error) {
	thread := forkThread(c, f.asMachine, b, sn)
	if err := s.forkPlanned(ctx, b, sn); err != nil {
		return nil, err
	}
	on, err := s.runsOn(ctx, b)
	if err != nil {
		return nil, err
	}
	ops := make([]*snapshots.Operation, 0, len(f.names))
	err = store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		b, sn, err := s.k.ChangeNow(ctx, tx, b.ID, sn.ID, f.snapRef, snapshots.ChangeFork)
		if err != nil {
			return err
		}
		if err := s.k.Unsettled(ctx, tx, b); err != nil {
			return err
		}
		for i, name := range f.names {
			op, err := s.k.Admit(ctx, tx, snapshots.OpRequest{Kind: snapshots.OpFork, Box: b, Target: sn, Pins: []string{sn.ID}, Caller: c,
				RequestID: f.requestID(i), Params: ForkParams{RunsOn: on, Name: name, BoxID: snapshots.NewID(snapshots.PrefixBox), Thread: thread}})
			if err != nil {
				return err
			}
			ops = append(ops, op)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i, op := range ops {
		s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvForkAsked, c, logForkWords(sn.Name, f.names[i]), sn.ID, op.ID, nil)
	}
	return ops, nil
}

// forkThread is the thread a fork's new box goes in: an agent's own; none
// (one of the person's machines) when the person asks for that or when a
// kept snapshot of a released box forks; else the source box's.
func forkThread(c snapshots.Caller, asMachine bool, b *snapshots.Box, sn *snapshots.Snapshot) *string {
	switch {
	case c.Kind == snapshots.CallerAgent:
		t := c.Thread
		return &t
	case asMachine || b.State == snapshots.BoxReleased || sn.Kept() && b.State != snapshots.BoxReady:
		return nil // a kept snapshot of a released box forks as one of the person's machines
	default:
		return b.ThreadID
	}
}

// forkPlanned refuses a fork of sn the core's rules or its backend's plan
// refuse: in the core's words before the backend is asked. A released box
// has no guest to plan on, nor has a box another host owns here: its
// snapshot forks as it is (once this host reaches its content,
// checkElsewhere), and the backend's fork says if it cannot.
func (s *Forks) forkPlanned(ctx context.Context, b *snapshots.Box, sn *snapshots.Snapshot) error {
	be, err := s.k.Backend(b.BackendID)
	if err != nil {
		return err
	}
	if err := snapshots.Eligible(sn, snapshots.ChangeFork, nil, s.now(), s.k.TimeZone(ctx)); err != nil {
		return err
	}
	owner, err := s.ownerElsewhere(ctx, b)
	if err != nil {
		return err
	}
	if owner != "" {
		if err := s.checkElsewhere(ctx, b, sn, owner); err != nil {
			return err
		}
	}
	plan := providers.SnapshotPlan{Fork: providers.ForkPlan{OK: true}}
	if b.State != snapshots.BoxReleased && owner == "" {
		ref := snapshots.RefOf(sn, b)
		if plan, err = s.k.PlanNow(ctx, b, be, &ref); err != nil {
			return s.k.PlanError(b, be, err)
		}
	}
	if !plan.Fork.OK {
		why := plan.Fork.Why
		if why == "" {
			why = snapshots.CannotBeForkedWords(sn.Name, "on "+be.Label)
		}
		return refusal(snapshots.CodePlan, why)
	}
	return nil
}
