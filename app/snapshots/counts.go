package snapshots

import (
	"fmt"
	"strings"
)

// Counts are snapshots counted by the one rule every page, the API and the
// tools share: All is every record a list shows, and the words name what
// is in it ("3 snapshots: 1 kept, 1 undo"). Kept and undos do not
// overlap: a kept undo counts as kept. ToLimit is what the per-box limit
// counts (undos apart, kept ones counted, failed and deleting ones not;
// section 8).
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
	c := Counts{All: len(sns), ToLimit: countTowardLimit(sns)}
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

// Words say the count and what is in it: "No snapshots", "1 snapshot",
// "3 snapshots: 1 kept, 1 undo".
func (c Counts) Words() string {
	if c.All == 0 {
		return "No snapshots"
	}
	w := Plural(c.All, "snapshot", "snapshots")
	var parts []string
	if c.Kept > 0 {
		parts = append(parts, fmt.Sprintf("%d kept", c.Kept))
	}
	if c.Undos > 0 {
		parts = append(parts, Plural(c.Undos, "undo", "undos"))
	}
	if c.Failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", c.Failed))
	}
	if len(parts) > 0 {
		w += ": " + strings.Join(parts, ", ")
	}
	return w
}

// LimitWords say what the per-box limit counts: "2 of 5 toward the limit".
func (c Counts) LimitWords(perBox int) string {
	return fmt.Sprintf("%d of %d toward the limit", c.ToLimit, perBox)
}

// Plural says n things with the right noun: "1 snapshot", "2 snapshots".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
