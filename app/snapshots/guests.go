package snapshots

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// GuestQueries are the queries of the reconcile's guest check (guests.sql).
var GuestQueries = []string{"GuestMissingMark", "GuestMissingClear"}

// EvGuestGone is the box log's event for a guest the reconcile found gone.
const EvGuestGone = "guest-gone"

// checkGuests reads each ready box's guest on be: a guest gone from its
// backend (removed outside boxsnap) is said once in the box's log, and
// counted in the report; its snapshots stay. A read that fails says nothing.
func (s *Service) checkGuests(ctx context.Context, be Backend, rep *ReconcileReport) error {
	if be.Boxes == nil {
		return nil
	}
	rows, err := s.st.Pool.Query(ctx, s.st.Q("SweepBoxesOfBackend"), be.ID)
	if err != nil {
		return err
	}
	boxes, err := pgx.CollectRows(rows, pgx.RowToAddrOfStructByName[Box])
	if err != nil {
		return err
	}
	for _, b := range boxes {
		if b.State != "ready" {
			continue
		}
		st, err := be.Boxes.Status(ctx, guestOf(b))
		if err != nil {
			continue
		}
		if st.Exists {
			if _, err := s.st.Pool.Exec(ctx, s.st.Q("GuestMissingClear"), b.ID); err != nil {
				return err
			}
			continue
		}
		rep.GuestsGone = append(rep.GuestsGone, b.Name)
		tag, err := s.st.Pool.Exec(ctx, s.st.Q("GuestMissingMark"), b.ID, b.GuestRef, s.now())
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 1 {
			s.log(ctx, s.st.Pool, b.ID, EvGuestGone, System("reconcile"),
				fmt.Sprintf("its guest %s is gone from %s: removed outside boxsnap; its snapshots stay", b.GuestRef, hostWords(b, be)), "", "", nil)
		}
	}
	return nil
}
