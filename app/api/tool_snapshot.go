package api

import (
	"context"
	"net/http"

	"github.com/boxsnap/boxsnap/app/api/answers"
	"github.com/boxsnap/boxsnap/app/api/toolparams"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/app/wire"
	"github.com/boxsnap/boxsnap/providers"
)

const snapshotTakes = "box, and optionally name, note, memory and request"

// toolSnapshot is box_snapshot: it takes one, waits for it, and answers.
func (s agentTools) toolSnapshot(w http.ResponseWriter, r *http.Request) {
	p, ok := openTool(s.failer, w, r, snapshotTakes, func(p *toolparams.SnapshotParams) toolOpening {
		return toolOpening{refs: checkRef("box", p.Box), request: p.Request}
	})
	if !ok {
		return
	}
	var sn *snapshots.Snapshot
	op, ok := s.runTool(w, r, func(ctx context.Context, c snapshots.Caller) (*snapshots.Operation, error) {
		op, taken, err := s.take.Take(ctx, c, take.TakeRequest{Box: p.Box, Name: p.Name, Note: p.Note, Memory: p.Memory, RequestID: p.Request})
		sn = taken
		return op, err
	})
	if !ok {
		return
	}
	c := caller(r)
	res, err := s.take.Kinds().Take.Result(op)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var box string
	var price *providers.Price
	if sn != nil && sn.ID == res.Snapshot {
		// The record the admission made names the box and holds the price
		// its backend offered (a take changes neither): no read again.
		box, price = sn.BoxName, s.SnapshotPrice(sn, nil)
	} else {
		box, price = s.BoxName(r.Context(), c, op), s.PriceOf(r.Context(), c, res.Snapshot)
	}
	own := "own"
	writeJSON(w, http.StatusOK, wire.TakeAnswer{
		Message: answers.TakeWords(box, res, price), Operation: op.ID, Snapshot: res.Snapshot, Name: res.Name, Box: box,
		Holds: snapshots.HoldsWords(res.Holds, ""), Excludes: res.Excludes, SizeBytes: res.Size, Size: snapshots.SizeOfWords(res.Size, &own), TookMs: res.TookMs,
		Price: price, Count: res.Count, Limit: res.Limit, OfLimit: answers.CountWords(res.Count, res.Limit), Replaced: res.Replaced,
	})
}
