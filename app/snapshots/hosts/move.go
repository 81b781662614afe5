package hosts

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// Move moves a box to the host to, which must be the host that serves the
// call: the box's guest is made there, empty, its owner becomes to, and a
// restore from its newest ready snapshot is admitted (its job on to's
// queue), with no undo (the box was not on to to take one). It is refused
// in words, changing nothing, when the caller is not the person, the box
// has no owner or is on to already, to is not this host, never ran
// boxsnap or is marked gone, the box has an operation running or no ready
// snapshot, or its backend's content is not reachable from every host.
func (h *Hosts) Move(ctx context.Context, c snapshots.Caller, boxRef, to string) (*snapshots.Operation, error) {
	if !c.IsPerson() {
		return nil, &snapshots.Refusal{Code: snapshots.CodeForbidden, Words: personOnlyWords}
	}
	b, err := h.k.Box(ctx, c, boxRef)
	if err != nil {
		return nil, err
	}
	if err := h.mayGoTo(ctx, to); err != nil {
		return nil, err
	}
	from, err := h.st.HostBoxOwner(ctx, h.st.Pool, b.ID)
	if err != nil {
		return nil, fmt.Errorf("read box %s's host: %w", b.ID, err)
	}
	if be, err := h.k.Backend(b.BackendID); from == nil && err == nil && be.OneHost() {
		return nil, &snapshots.Refusal{Code: snapshots.CodeCannot, Words: noOwnerOneHostWords(b.Name, b.BackendID)}
	} else if from == nil {
		return nil, &snapshots.Refusal{Code: snapshots.CodeCannot, Words: noOwnerWords(b.Name, b.BackendID)}
	}
	if *from == to {
		return nil, &snapshots.Refusal{Code: snapshots.CodeInvalid, Words: alreadyOnWords(b.Name, to)}
	}
	sn, err := h.carriable(ctx, b, *from)
	if err != nil {
		return nil, err
	}
	if to != h.host {
		return nil, &snapshots.Refusal{Code: snapshots.CodeInvalid, Words: askOnTargetWords(b.Name, to)}
	}
	if n, err := h.k.Engine().ActiveOnBox(ctx, h.st.Pool, b.ID, ""); err != nil {
		return nil, err
	} else if n > 0 {
		return nil, &snapshots.Refusal{Code: snapshots.CodeBusy, Words: busyWords(b.Name), TryAgain: true}
	}
	return h.carry(ctx, c, b, sn, *from, to, EvMovedHost, logMovedWords(*from, to, sn.Name))
}

// carriable is the snapshot b is carried over from, its newest ready one,
// when its backend's content is reachable from every host; else a refusal
// in words.
func (h *Hosts) carriable(ctx context.Context, b *snapshots.Box, from string) (*snapshots.Snapshot, error) {
	be, err := h.k.Backend(b.BackendID)
	if err != nil {
		return nil, err
	}
	if sc, ok := be.Snap.(providers.SharedContent); !ok || !sc.ContentShared() {
		if !ok && be.OneHost() {
			return nil, h.oneHostRefusal(ctx, b, be, from)
		}
		return nil, &snapshots.Refusal{Code: snapshots.CodeCannot, Words: notSharedWords(b.Name, from)}
	}
	snaps, err := h.k.SnapshotsOfBox(ctx, h.st.Pool, b.ID)
	if err != nil {
		return nil, err
	}
	var newest *snapshots.Snapshot
	for _, sn := range snaps {
		if sn.State == snapshots.StateReady && (newest == nil || sn.TakenAt.After(newest.TakenAt)) {
			newest = sn
		}
	}
	if newest == nil {
		return nil, &snapshots.Refusal{Code: snapshots.CodeConflict, Words: noSnapshotWords(b.Name)}
	}
	if err := h.shipped(ctx, b, be, newest, from); err != nil {
		return nil, err
	}
	return newest, nil
}

// carry admits b's restore from sn, which runs on to, and in the same
// transaction makes to the owner of b, moving the jobs of b still waiting
// in from's queue to to's: a refused restore, or a process killed before
// the transaction ends, leaves b with from, so the same move or takeover
// asked again carries it over. The box log says what was done.
func (h *Hosts) carry(ctx context.Context, c snapshots.Caller, b *snapshots.Box, sn *snapshots.Snapshot, from, to, event, words string) (*snapshots.Operation, error) {
	if h.restorer == nil {
		return nil, errors.New("hosts: no restorer (UseRestorer was not called)")
	}
	if err := h.makeHere(ctx, b, sn); err != nil {
		return nil, err
	}
	op, err := h.restorer.Restore(ctx, c, snapshots.RestoreRequest{Box: b.ID, Snapshot: sn.ID, Replace: true, NoUndo: true, Force: true,
		Along: func(ctx context.Context, tx pgx.Tx) error { return h.setOwner(ctx, tx, b.ID, from, to) }})
	if err != nil {
		return nil, err
	}
	h.k.Log(ctx, h.st.Pool, b.ID, event, c, words, sn.ID, op.ID, map[string]string{"from": from, "to": to})
	return op, nil
}

// makeHere makes b's guest, empty, on this host's backend when it has none,
// so the restore that carries b over from sn has a box to write its
// snapshot into here: its folder, named for its guest as on the host it
// comes from, running as b ran when sn was taken (carriedSpec).
func (h *Hosts) makeHere(ctx context.Context, b *snapshots.Box, sn *snapshots.Snapshot) error {
	be, err := h.k.Backend(b.BackendID)
	if err != nil {
		return err
	}
	if st, err := be.Boxes.Status(ctx, snapshots.GuestOf(b)); err == nil && st.Exists {
		return nil
	}
	spec, err := h.carriedSpec(ctx, b, be, sn)
	if err != nil {
		return err
	}
	if _, err := be.Boxes.Acquire(ctx, spec); err != nil {
		return fmt.Errorf("make box %s's guest on host %s: %w", b.Name, h.host, err)
	}
	return nil
}

// setOwner makes to the owner of box, and moves its jobs still waiting in
// from's queue to to's, in tx.
func (h *Hosts) setOwner(ctx context.Context, tx pgx.Tx, box, from, to string) error {
	if err := h.st.HostBoxSetOwner(ctx, tx, db.HostBoxSetOwnerParams{ID: box, OwnerHost: &to}); err != nil {
		return fmt.Errorf("make host %s the owner of box %s: %w", to, box, err)
	}
	if _, err := h.st.HostJobsRequeue(ctx, tx, db.HostJobsRequeueParams{FromQueue: operations.HostQueue(from), ToQueue: operations.HostQueue(to), Boxes: []string{box}}); err != nil {
		return fmt.Errorf("move box %s's waiting jobs to host %s: %w", box, to, err)
	}
	return nil
}
