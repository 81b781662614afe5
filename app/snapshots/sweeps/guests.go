package sweeps

import (
	"context"
	"fmt"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store/db"
)

// checkGuests reads each ready box's guest on be: a guest gone from its
// backend (removed outside boxsnap) is said once in the box's log, and
// counted in the report; its snapshots stay. A read that fails says nothing.
// Of a one-host backend, a box another host owns is left to that host, and
// a box no host owns yet whose guest is here becomes this host's (o).
func (s *Sweeps) checkGuests(ctx context.Context, be snapshots.Backend, o *owners, rep *ReconcileReport) error {
	if be.Boxes == nil {
		return nil
	}
	boxes, err := snapshots.BoxRows(s.st.SweepBoxesOfBackend(ctx, s.st.Pool, be.ID))
	if err != nil {
		return fmt.Errorf("the boxes of %s: %w", be.ID, err)
	}
	for _, b := range boxes {
		if b.State != snapshots.BoxReady {
			continue
		}
		unowned := o != nil && o.of[b.ID] == nil
		if !unowned && s.elsewhere(be, b.Host, b.ID, o) {
			continue
		}
		st, err := be.Boxes.Status(ctx, snapshots.GuestOf(b))
		if err != nil {
			continue
		}
		if st.Exists {
			s.claim(ctx, b.ID, o)
		}
		if s.elsewhere(be, b.Host, b.ID, o) {
			continue
		}
		if st.Exists {
			if err := s.st.GuestMissingClear(ctx, s.st.Pool, b.ID); err != nil {
				return err
			}
			continue
		}
		rep.GuestsGone = append(rep.GuestsGone, b.Name)
		marked, err := s.st.GuestMissingMark(ctx, s.st.Pool, db.GuestMissingMarkParams{BoxID: b.ID, Guest: b.GuestRef, Since: s.now()})
		if err != nil {
			return err
		}
		if marked == 1 {
			s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvGuestGone, snapshots.System(byReconcile),
				logGuestGoneWords(b.GuestRef, snapshots.HostWords(b, be)), "", "", nil)
		}
	}
	return nil
}
