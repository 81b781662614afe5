package boxes

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots"
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
	Box    *snapshots.Box
	Counts snapshots.Counts
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
func (s *Boxes) Machines(ctx context.Context, c snapshots.Caller, q MachinesQuery) (*MachinesPage, error) {
	if !c.IsPerson() {
		return nil, &snapshots.Refusal{Code: snapshots.CodeForbidden, Words: onlyPersonSeesBoxesWords}
	}
	if q.Limit < 1 || q.Limit > 500 {
		return nil, &snapshots.Refusal{Code: snapshots.CodeInvalid, Words: snapshots.PageHoldsWords}
	}
	arg := db.TabMachinesParams{Released: q.Released, PageSize: q.Limit + 1}
	if q.After != "" {
		name, id, ok := parseMachinesCursor(q.After)
		if !ok {
			return nil, &snapshots.Refusal{Code: snapshots.CodeInvalid, Words: snapshots.AfterNotAPlaceWords}
		}
		arg.AfterName, arg.AfterID = &name, &id
	}
	boxes, err := snapshots.BoxRows(s.st.TabMachines(ctx, snapshots.Planned(s.st.Reader(ctx)), arg))
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
	counts := make(map[string]snapshots.Counts, len(rows))
	for _, r := range rows {
		counts[r.BoxID] = snapshots.Counts{All: r.Snapshots, Kept: r.Kept, Undos: r.Undos, Failed: r.Failed, ByAgents: r.ByAgents, ToLimit: r.ToLimit}
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
