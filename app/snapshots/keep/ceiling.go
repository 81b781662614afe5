package keep

import (
	"context"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// keptCharge is a held snapshot's charge as a Keep or renewal sees it: it
// adds nothing to the rate, but is refused while the rate is past.
func keptCharge(sn *snapshots.Snapshot) snapshots.Charge {
	ch := snapshots.ChargeOfSnapshot(sn)
	ch.Daily = 0
	ch.Known = true
	return ch
}

// KeepCeiling says why keeping or renewing sn is refused now, in the
// ceiling's words, or "" (for the row's Keep, "Keep 30 more days" and bulk
// Keep, which say so before the person asks).
func (s *Keeps) KeepCeiling(ctx context.Context, sn *snapshots.Snapshot) string {
	if !snapshots.ChargeOfSnapshot(sn).Paid {
		return ""
	}
	st, err := s.k.Settings(ctx)
	if err != nil {
		return ""
	}
	if err := s.k.CeilingAdmits(ctx, s.st.Pool, snapshots.Owner(), sn.BackendID, keptCharge(sn), st); err != nil {
		if r, ok := snapshots.AsRefusal(err); ok {
			return r.Words
		}
	}
	return ""
}
