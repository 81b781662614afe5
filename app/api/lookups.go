package api

import (
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/app/snapshots/heads"
)

// lookups are the reads that a route and a tool answer alike (a folder, a
// file, a comparison, a lineage, the boxes, a listing) and the words of
// what a snapshot or an operation is. Each asks the core with the
// request's caller, so it answers only for what that caller may see. A
// group of handlers reaches them through an interface it declares, naming
// the ones it uses.
type lookups struct {
	core     *snapshots.Service
	contents *contents.Contents
	heads    *heads.Heads
	boxes    *boxes.Boxes
}
