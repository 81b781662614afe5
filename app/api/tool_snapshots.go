package api

import (
	"context"
	"encoding/base64"
	"net/http"
	"time"

	"github.com/boxsnap/boxsnap/app/api/answers"
	"github.com/boxsnap/boxsnap/app/api/toolparams"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/wire"
)

const snapshotsTakes = "box, pictures and automatic, all optional"

// toolSnapshots is box_snapshots: a box's snapshots, or every box's of the
// thread, that the caller may see.
func (s agentTools) toolSnapshots(w http.ResponseWriter, r *http.Request) {
	var p toolparams.SnapshotsParams
	if err := decode(r, &p, snapshotsTakes); err != nil {
		s.fail(w, r, err)
		return
	}
	if p.Box != "" {
		if err := checkRef("box", p.Box); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	c := caller(r)
	ctx := r.Context()
	var boxes []*snapshots.Box
	if p.Box != "" {
		b, err := s.core.Box(ctx, c, p.Box)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		boxes = []*snapshots.Box{b}
	} else {
		var err error
		if boxes, err = s.boxes.List(ctx, c); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	settings, err := s.core.Settings(ctx)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	tz := s.core.TimeZone(ctx)
	ans := wire.SnapshotsAnswer{Boxes: []wire.BoxListing{}}
	for _, b := range boxes {
		if b.State == snapshots.BoxReleased {
			continue
		}
		list, err := s.core.List(ctx, c, snapshots.ListQuery{Box: b.ID, Automatic: p.Automatic})
		if err != nil {
			s.fail(w, r, err)
			return
		}
		var all []*snapshots.Snapshot
		if len(list) > 0 {
			all = list[0].Snapshots
		}
		bl := wire.BoxListing{Box: b.Name, ID: b.ID, Snapshots: []wire.ListedShort{}}
		for _, sn := range all {
			bl.Snapshots = append(bl.Snapshots, s.short(ctx, c, b, sn, tz, p.Pictures))
		}
		bl.OfLimit = answers.CountWords(snapshots.CountOf(all).ToLimit, settings.PerBox)
		bl.Message = s.BoxHoldsWords(b, len(all))
		bl.Stopped = s.boxes.StoppedWords(ctx, c, b)
		ans.Boxes = append(ans.Boxes, bl)
	}
	writeJSON(w, http.StatusOK, ans)
}

// short is one snapshot as a tool lists it; its picture only when asked and
// only where mayAct allows (never a kept one's for an agent).
func (s agentTools) short(ctx context.Context, c snapshots.Caller, b *snapshots.Box, sn *snapshots.Snapshot, tz *time.Location, pictures bool) wire.ListedShort {
	ls := wire.ListedShort{Name: sn.Name, ID: sn.ID, TakenAt: sn.TakenAt, When: sn.TakenAt.In(tz).Format("Mon 2 Jan 15:04"),
		By: s.ByWords(ctx, sn), Holds: snapshots.HoldsWords(sn.Holds, sn.Scope), SizeBytes: sn.SizeBytes, Size: snapshots.SizeOfWords(sn.SizeBytes, sn.SizeMeaning),
		Kept: sn.Kept(), KeptUntil: sn.KeptUntil, Guest: sn.Guest, State: sn.State, Undo: sn.IsUndo(), Automatic: sn.Automatic}
	if sn.Note != nil {
		ls.Note = *sn.Note
	}
	ls.Price = s.SnapshotPrice(sn, b)
	if pictures && sn.Picture == "taken" {
		if pic, err := s.pictures.Get(ctx, c, sn.ID); err == nil {
			ls.Picture = &wire.PictureData{JPEG: base64.StdEncoding.EncodeToString(pic.JPEG), Width: pic.Width, Height: pic.Height}
		}
	}
	return ls
}
