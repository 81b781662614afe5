package hosts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// forkDepth bounds how many forks back a box's run is looked for: a fork
// records no run of its own and runs as its source box did.
const forkDepth = 16

// recordedRun is how b runs as the database recorded it when b was made
// (snapshots.BoxRun), or, for a fork, when the box it was forked from (or
// that box's source) was made; ok is false when none was recorded, as for
// a box made before runs were. Errors never carry the run, whose
// environment may hold secrets.
func (h *Hosts) recordedRun(ctx context.Context, b *snapshots.Box) (run snapshots.BoxRun, ok bool, err error) {
	id, from := b.ID, b.ForkedFrom
	for range forkDepth {
		raw, err := h.st.BoxRunByBox(ctx, h.st.Pool, id)
		if err == nil {
			if run, err = snapshots.UnmarshalRun(raw); err != nil {
				return run, false, fmt.Errorf("read how box %s runs: its record is not a run", b.Name)
			}
			return run, true, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return run, false, fmt.Errorf("read how box %s runs: %w", b.Name, err)
		}
		var f struct {
			Box string `json:"box"`
		}
		if len(from) == 0 || json.Unmarshal(from, &f) != nil || f.Box == "" {
			return run, false, nil
		}
		src, err := h.st.CoreBoxByID(ctx, h.st.Pool, f.Box)
		if errors.Is(err, pgx.ErrNoRows) {
			return run, false, nil
		}
		if err != nil {
			return run, false, fmt.Errorf("read the box %s was forked from: %w", b.Name, err)
		}
		id, from = src.ID, src.ForkedFrom
	}
	return run, false, nil
}
