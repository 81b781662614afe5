package boxes

import (
	"context"
	"fmt"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store/db"
)

// BoxLog reads a box's log, newest first, as the caller may see it: an agent
// reads only the events of its own thread's actions and boxsnap's.
func (s *Boxes) BoxLog(ctx context.Context, c snapshots.Caller, boxRef string, limit int) ([]snapshots.LogEvent, error) {
	b, err := s.k.Box(ctx, c, boxRef)
	if err != nil {
		return nil, err
	}
	if limit <= 0 || limit > snapshots.BoxLogKeep {
		limit = 200
	}
	rows, err := s.st.CoreLogOfBox(ctx, s.st.Pool, db.CoreLogOfBoxParams{BoxID: b.ID, MaxRows: limit})
	if err != nil {
		return nil, fmt.Errorf("read box log: %w", err)
	}
	all := make([]snapshots.LogEvent, len(rows))
	for i, r := range rows {
		all[i] = snapshots.LogEvent(r)
	}
	if c.Kind != snapshots.CallerAgent {
		return all, nil
	}
	var out []snapshots.LogEvent
	for _, e := range all {
		if e.ActorKind == "agent" && (e.ActorThread == nil || *e.ActorThread != c.Thread) {
			continue
		}
		out = append(out, e)
	}
	return out, nil
}
