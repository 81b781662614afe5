package tab

import (
	"context"
	"fmt"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// Picked is a snapshot the person selected, with its box and the pins of
// the operations running on it now.
type Picked struct {
	Snapshot *snapshots.Snapshot
	Box      *snapshots.Box
	Pins     []snapshots.Pin
}

// Pick reads the snapshots ids names, and only those (with their boxes),
// as c may see them, by ID: the Select mode's bulk actions check each with
// Eligible at the moment, as they always did, without reading the install.
// An ID that is not a snapshot c may see is not in the answer.
func (s *Tab) Pick(ctx context.Context, c snapshots.Caller, ids []string) (map[string]Picked, error) {
	var valid []string
	for _, id := range ids {
		if snapshots.ValidID(snapshots.PrefixSnapshot, id) {
			valid = append(valid, id)
		}
	}
	out := map[string]Picked{}
	if len(valid) == 0 {
		return out, nil
	}
	sns, err := snapshots.SnapshotRows(s.st.TabSnapshotsByID(ctx, s.st.Pool, valid))
	if err != nil {
		return nil, fmt.Errorf("read the selected snapshots: %w", err)
	}
	boxIDs := make([]string, 0, len(sns))
	for _, sn := range sns {
		boxIDs = append(boxIDs, sn.BoxID)
	}
	bs, err := snapshots.BoxRows(s.st.TabBoxesByID(ctx, s.st.Pool, boxIDs))
	if err != nil {
		return nil, fmt.Errorf("read the selected snapshots' boxes: %w", err)
	}
	boxes := make(map[string]*snapshots.Box, len(bs))
	for _, b := range bs {
		boxes[b.ID] = b
	}
	pins, err := s.k.AllPins(ctx, s.st.Pool)
	if err != nil {
		return nil, err
	}
	for _, sn := range sns {
		b := boxes[sn.BoxID]
		if b == nil || snapshots.MayAct(c, snapshots.ActSee, b, sn) != nil {
			continue
		}
		out[sn.ID] = Picked{Snapshot: sn, Box: b, Pins: pins[sn.ID]}
	}
	return out, nil
}
