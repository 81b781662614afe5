package snapshots

import (
	"context"
	"fmt"
)

// MachinesQuery asks for one page of the Machines tab: the live boxes, or
// the released ones, by name.
type MachinesQuery struct {
	Released bool
	// After is a page's Next: the page starts after it.
	After string
	// Limit is how many boxes a page holds (1 to 500).
	Limit int
}

// MachineRow is one box of the Machines tab with its snapshots' counts.
type MachineRow struct {
	Box    *Box
	Counts Counts
}

// MachinesPage is one page of the Machines tab.
type MachinesPage struct {
	Boxes []MachineRow
	// Next is the cursor of the page after this one, or "" at the end.
	Next string
}

// Picked is a snapshot the person selected, with its box and the pins of
// the operations running on it now.
type Picked struct {
	Snapshot *Snapshot
	Box      *Box
	Pins     []Pin
}

// Pick reads the snapshots ids names, and only those (with their boxes),
// as c may see them, by ID: the Select mode's bulk actions check each with
// Eligible at the moment, as they always did, without reading the install.
// An ID that is not a snapshot c may see is not in the answer.
func (s *Service) Pick(ctx context.Context, c Caller, ids []string) (map[string]Picked, error) {
	var valid []string
	for _, id := range ids {
		if ValidID(PrefixSnapshot, id) {
			valid = append(valid, id)
		}
	}
	out := map[string]Picked{}
	if len(valid) == 0 {
		return out, nil
	}
	sns, err := SnapshotRows(s.st.TabSnapshotsByID(ctx, s.st.Pool, valid))
	if err != nil {
		return nil, fmt.Errorf("read the selected snapshots: %w", err)
	}
	boxIDs := make([]string, 0, len(sns))
	for _, sn := range sns {
		boxIDs = append(boxIDs, sn.BoxID)
	}
	bs, err := BoxRows(s.st.TabBoxesByID(ctx, s.st.Pool, boxIDs))
	if err != nil {
		return nil, fmt.Errorf("read the selected snapshots' boxes: %w", err)
	}
	boxes := make(map[string]*Box, len(bs))
	for _, b := range bs {
		boxes[b.ID] = b
	}
	pins, err := s.AllPins(ctx, s.st.Pool)
	if err != nil {
		return nil, err
	}
	for _, sn := range sns {
		b := boxes[sn.BoxID]
		if b == nil || MayAct(c, ActSee, b, sn) != nil {
			continue
		}
		out[sn.ID] = Picked{Snapshot: sn, Box: b, Pins: pins[sn.ID]}
	}
	return out, nil
}
