package sweeps

import (
	"context"
	"fmt"
)

// ownedElsewhere are the boxes another host owns, whose data is on that
// host's disk: this process's automatic check leaves them to a run on
// their host's queue (the jobs' fan-out), since a check here would ask a
// folder this host does not have, or a stale copy one a move left. Nil
// when the process names no host.
func (s *Sweeps) ownedElsewhere(ctx context.Context) (map[string]bool, error) {
	if s.host == "" {
		return nil, nil
	}
	ids, err := s.st.BoxesOwnedElsewhere(ctx, s.st.Pool, &s.host)
	if err != nil {
		return nil, fmt.Errorf("read the boxes other hosts own: %w", err)
	}
	out := make(map[string]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}
