package pagemodel

import (
	"fmt"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// TrashRow is one box in the trash.
type TrashRow struct {
	Head  BoxHead
	Goes  string // when it goes
	Final string // its final snapshot, or why there is none
	Costs string
}

// TrashRows are the Trash tab's rows: each box in the trash, when it goes,
// its final snapshot or why there is none, and what the trash costs.
func (rb *RowBuilder) TrashRows(list []snapshots.TrashEntry, rc RowContext) []TrashRow {
	var rows []TrashRow
	for _, e := range list {
		row := TrashRow{Head: rb.Head(e.Box, rc), Goes: "goes " + e.Until.In(rc.tz).Format("Mon 2 Jan 15:04"), Costs: e.Costs}
		if e.FinalName != "" {
			row.Final = fmt.Sprintf("Its final snapshot, ‘%s’, is in its history.", e.FinalName)
		} else {
			row.Final = "No final snapshot: " + e.FinalWords
		}
		rows = append(rows, row)
	}
	return rows
}
