package pagemodel

import (
	"log/slog"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/app/snapshots/heads"
	"github.com/boxsnap/boxsnap/app/snapshots/keep"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	"github.com/boxsnap/boxsnap/app/snapshots/tab"
)

// Parts are the core's parts the builders read.
type Parts struct {
	Core      *snapshots.Service
	Boxes     *boxes.Boxes
	Contents  *contents.Contents
	Heads     *heads.Heads
	Tab       *tab.Tab
	Approvals *approvals.Approvals
	Restores  *restore.Restores
	Forks     *fork.Forks
	Logger    *slog.Logger

	// Keeps says why a Keep is off while the rate is past the ceiling.
	Keeps *keep.Keeps
}

// NewBuilders makes the row builder and the dialog builder over the core's
// parts; the rows keep each box's plan a few seconds (planCacheFor).
func NewBuilders(p Parts) (*RowBuilder, *DialogBuilder) {
	rb := &RowBuilder{core: p.Core, boxes: p.Boxes, contents: p.Contents, plans: &PlanCache{}, heads: p.Heads,
		tab: p.Tab, keeps: p.Keeps, approvals: p.Approvals, logger: p.Logger}
	dlg := &DialogBuilder{core: p.Core, restores: p.Restores, boxes: p.Boxes, forks: p.Forks, contents: p.Contents, rows: rb}
	return rb, dlg
}
