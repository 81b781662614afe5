package snapshots

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
