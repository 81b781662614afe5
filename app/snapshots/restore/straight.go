package restore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// accessOf is what the box holds of boxsnap's now.
func (s *Restores) accessOf(b *snapshots.Box) providers.Access {
	a := providers.Access{Box: providers.BoxIdentity{ID: b.ID, Name: b.Name, Kind: b.Kind, Install: s.install}, Generation: b.Generation}
	if b.ThreadID != nil {
		a.Thread = *b.ThreadID
	}
	for _, w := range b.Presence.Workspaces {
		a.Threads = append(a.Threads, w.Thread)
	}
	return a
}

// withAccess puts the step that sets the box straight into a restore's order,
// before the box starts, where the backend can (access first). A backend
// whose order places the step itself (QEMU's, before a memory revert) keeps
// it there.
func withAccess(order []providers.RestoreStep, be snapshots.Backend) []providers.RestoreStep {
	if _, ok := be.Snap.(providers.Straightener); !ok || slices.Contains(order, providers.StepAccess) {
		return order
	}
	out := make([]providers.RestoreStep, 0, len(order)+1)
	put := false
	for _, st := range order {
		if st == providers.StepStart && !put {
			out = append(out, providers.StepAccess)
			put = true
		}
		out = append(out, st)
	}
	if !put {
		out = append(out, providers.StepAccess)
	}
	return out
}

// SetStraight writes the box's access back as it is now, and its labels, and
// says in the box log what it set straight. A lock the host left, which
// boxsnap cannot clear, is said with the host's command. opID is the
// restore's, or "" after a restore made outside.
func (s *Restores) SetStraight(ctx context.Context, opID string, b *snapshots.Box, be snapshots.Backend, after string) error {
	st, ok := be.Snap.(providers.Straightener)
	if !ok {
		return nil
	}
	did, err := st.SetStraight(ctx, snapshots.GuestOf(b), s.accessOf(b))
	var locked *providers.LockedError
	switch {
	case errors.As(err, &locked):
		words := logSetStraightWords(after, did, snapshots.LockedWords(be.Label, b.Name, locked.Lock.Lock, locked.Lock.Fix))
		s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvSetStraight, snapshots.System("a restore's last step"), words, "", opID, nil)
		return nil
	case err != nil:
		return err
	}
	words := logSetStraightWords(after, did, "")
	s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvSetStraight, snapshots.System("a restore's last step"), words, "", opID, nil)
	return nil
}

// swapGuests is what a swap records on its operation before it changes a
// guest, so a restart goes on with the same guests: the old guest, the
// identity it passes on, and the new guest once it is made.
type swapGuests struct {
	Old      providers.Guest         `json:"old"`
	Identity providers.GuestIdentity `json:"identity"`
	New      *providers.Guest        `json:"new,omitempty"`
}

// swapStep runs one step of a swap (undoing a ZFS restore makes a new guest
// with the box's identity), and answers the box as it is after it.
func (s *Restores) swapStep(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, target *snapshots.Snapshot, be snapshots.Backend, step providers.RestoreStep) (*snapshots.Box, error) {
	hc, ok1 := be.Snap.(providers.HeldCopier)
	sw, ok2 := be.Snap.(providers.Swapper)
	if !ok1 || !ok2 {
		return b, fmt.Errorf("%s makes no swaps: %w", be.Label, providers.ErrUnsupported)
	}
	cur, err := s.ops.ByID(ctx, s.st.Pool, op.ID)
	if err != nil {
		return b, err
	}
	var g swapGuests
	if len(cur.Guests) > 0 {
		if err := json.Unmarshal(cur.Guests, &g); err != nil {
			return b, fmt.Errorf("the guests %s recorded: %w", op.ID, err)
		}
	}
	record := func() error {
		raw, err := json.Marshal(g)
		if err != nil {
			return fmt.Errorf("record the guests of %s: %w", op.ID, err)
		}
		return s.st.HeldOpSetGuests(ctx, s.st.Pool, db.HeldOpSetGuestsParams{ID: op.ID, Guests: raw})
	}
	box := providers.BoxIdentity{ID: b.ID, Name: b.Name, Kind: b.Kind, Install: s.install}
	switch step {
	case providers.StepAdopt:
		if g.Old.Ref == "" {
			id, err := sw.GuestIdentity(ctx, snapshots.GuestOf(b))
			if err != nil {
				return b, fmt.Errorf("read %s's identity: %w", b.Name, err)
			}
			g = swapGuests{Old: snapshots.GuestOf(b), Identity: id}
			if err := record(); err != nil {
				return b, err
			}
		}
		if g.New != nil {
			return b, nil
		}
		// The clone's task is waited for by the job's snooze: the swap
		// resumes here, and goes on with the guest that clone made once the
		// task ended OK (cloned); a clone that failed is made again, waited
		// for in place.
		adopt := providers.HeldCopyClone
		if op.Step == string(providers.StepAdopt) && snapshots.StepTaskDone(op) {
			adopt = providers.HeldCopyCloned
		}
		ng, err := hc.AdoptCopy(ctx, snapshots.RefOf(target, b), box, g.Identity, adopt, s.k.TaskRecorder(op))
		if err != nil {
			return b, err
		}
		g.New = &ng
		return b, record()
	case providers.StepEarlier:
		if g.New == nil {
			return b, errors.New("the swap has no new guest on record")
		}
		if err := sw.MakeEarlier(ctx, g.Old, box); err != nil {
			return b, err
		}
		err := store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
			if err := s.st.HeldToEarlier(ctx, tx, db.HeldToEarlierParams{BoxID: b.ID, GuestRef: g.Old.Ref}); err != nil {
				return err
			}
			return s.st.HeldBoxSwap(ctx, tx, db.HeldBoxSwapParams{ID: b.ID, GuestRef: g.New.Ref, Host: g.New.Host})
		})
		if err != nil {
			return b, fmt.Errorf("record the swap of %s: %w", b.Name, err)
		}
		nb, err := s.k.BoxByID(ctx, s.st.Pool, b.ID)
		if err != nil {
			return b, err
		}
		n, err := s.st.HeldEarlierInUse(ctx, s.st.Pool, db.HeldEarlierInUseParams{BoxID: b.ID, GuestRef: g.Old.Ref})
		if err != nil {
			// The swap is recorded; only the log's count is missing.
			s.logger.Warn("count the snapshots on an earlier guest", "box", b.Name, "err", err)
		}
		s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvHeldCopyMade, snapshots.CallerOf(op), logEarlierGuestWords(g.Old.Ref, b.Name, n, g.New.Ref), "", op.ID, nil)
		return nb, nil
	}
	return b, fmt.Errorf("swap step %q: %w", step, providers.ErrUnsupported)
}
