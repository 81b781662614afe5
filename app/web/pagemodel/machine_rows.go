package pagemodel

import (
	"context"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// MachineRow is one box on the Machines tab.
type MachineRow struct {
	Head  BoxHead
	Count string // by the core's one counting rule
	// State says whether the box runs, in a word and a colour (never the
	// colour alone): running, stopped, missing or unknown; "" for a
	// released box.
	State, StateClass string
}

// MachineState reads a live box's state from its backend.
func (rb *RowBuilder) MachineState(ctx context.Context, b *snapshots.Box) (words, class string) {
	if b.ReleasedAt != nil {
		return "", ""
	}
	st, err := rb.boxes.BoxStatus(ctx, snapshots.Owner(), b.ID)
	switch {
	case err != nil:
		return "State unknown", "unknown"
	case !st.Exists:
		return "Guest missing", "missing"
	case st.Running:
		return "Running", "running"
	}
	return "Stopped", "stopped"
}

// MachineList is one of the Machines tab's lists, a page of it.
type MachineList struct {
	Rows []MachineRow
	// More is the next page's address, or ""; MoreID the element it
	// replaces.
	More, MoreID string
}
