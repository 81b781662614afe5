package snapshots

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/boxsnap/boxsnap/app/store/db"
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

// Machines answers one page of the Machines tab for the person: a page of
// boxes by name (none in the trash) and the counts of their snapshots, each
// read in the database for the page's boxes alone (TabMachines,
// TabBoxCounts), so its cost follows the page, not the install.
func (s *Boxes) Machines(ctx context.Context, c Caller, q MachinesQuery) (*MachinesPage, error) {
	if !c.IsPerson() {
		return nil, refusal(CodeForbidden, wordsOnlyPersonSeesBoxes)
	}
	if q.Limit < 1 || q.Limit > 500 {
		return nil, refusal(CodeInvalid, WordsPageHolds)
	}
	arg := db.TabMachinesParams{Released: q.Released, PageSize: q.Limit + 1}
	if q.After != "" {
		name, id, ok := parseMachinesCursor(q.After)
		if !ok {
			return nil, refusal(CodeInvalid, WordsAfterNotAPlace)
		}
		arg.AfterName, arg.AfterID = &name, &id
	}
	boxes, err := BoxRows(s.st.TabMachines(ctx, Planned(s.st.Reader(ctx)), arg))
	if err != nil {
		return nil, fmt.Errorf("read the machines' page: %w", err)
	}
	page := &MachinesPage{}
	if len(boxes) > q.Limit {
		boxes = boxes[:q.Limit]
		last := boxes[len(boxes)-1]
		page.Next = machinesCursor(last.Name, last.ID)
	}
	if len(boxes) == 0 {
		return page, nil
	}
	ids := make([]string, len(boxes))
	for i, b := range boxes {
		ids[i] = b.ID
	}
	rows, err := s.st.TabBoxCounts(ctx, s.st.Reader(ctx), ids)
	if err != nil {
		return nil, fmt.Errorf("count the machines' snapshots: %w", err)
	}
	counts := make(map[string]Counts, len(rows))
	for _, r := range rows {
		counts[r.BoxID] = Counts{All: r.Snapshots, Kept: r.Kept, Undos: r.Undos, Failed: r.Failed, ByAgents: r.ByAgents, ToLimit: r.ToLimit}
	}
	for _, b := range boxes {
		page.Boxes = append(page.Boxes, MachineRow{Box: b, Counts: counts[b.ID]})
	}
	return page, nil
}

func machinesCursor(name, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte("machines\x00" + name + "\x00" + id))
}

func parseMachinesCursor(s string) (name, id string, ok bool) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return "", "", false
	}
	parts := strings.Split(string(raw), "\x00")
	if len(parts) != 3 || parts[0] != "machines" || parts[2] == "" {
		return "", "", false
	}
	return parts[1], parts[2], true
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
