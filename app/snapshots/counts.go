package snapshots

// Counts are snapshots counted by the one rule every page, the API and the
// tools share: All is every record a list shows, and the words name what
// is in it ("3 snapshots: 1 kept, 1 undo"). Kept and undos do not
// overlap: a kept undo counts as kept. ToLimit is what the per-box limit
// counts (undos apart, kept ones counted, failed and deleting ones not).
type Counts struct {
	All      int `json:"all"`
	Kept     int `json:"kept"`
	Undos    int `json:"undos"`
	Failed   int `json:"failed"`
	ByAgents int `json:"byAgents"`
	ToLimit  int `json:"toLimit"`
}

// CountOf counts sns by that rule.
func CountOf(sns []*Snapshot) Counts {
	c := Counts{All: len(sns), ToLimit: CountTowardLimit(sns)}
	for _, sn := range sns {
		switch {
		case sn.Kept():
			c.Kept++
		case sn.IsUndo():
			c.Undos++
		}
		if sn.State == StateFailed {
			c.Failed++
		}
		if sn.ByKind == "agent" {
			c.ByAgents++
		}
	}
	return c
}

// Add adds another box's counts.
func (c Counts) Add(o Counts) Counts {
	return Counts{All: c.All + o.All, Kept: c.Kept + o.Kept, Undos: c.Undos + o.Undos, Failed: c.Failed + o.Failed,
		ByAgents: c.ByAgents + o.ByAgents, ToLimit: c.ToLimit + o.ToLimit}
}
