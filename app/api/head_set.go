package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/api/toolparams"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/heads"
	"github.com/boxsnap/boxsnap/app/wire"
)

// setHead is box_head and PUT /boxes/{box}/head (its box from the path), a
// function both tables name: a snapshot the caller sees becomes the head.
func setHead(s headRoutes, w http.ResponseWriter, r *http.Request) {
	var p toolparams.HeadParams
	var err error
	if p.Box = param(r, "box"); p.Box != "" {
		var body wire.HeadBody
		err = decode(r, &body, "snapshot")
		p.Snapshot = body.Snapshot
	} else {
		err = decode(r, &p, "box and snapshot, and optionally request")
	}
	if err == nil {
		if err = checkBoxAndSnapshot(p.Box, p.Snapshot); err == nil {
			err = checkRequest(p.Request)
		}
	}
	var sn *snapshots.Snapshot
	if err == nil {
		sn, err = s.heads.ChooseHead(r.Context(), caller(r), p.Box, p.Snapshot)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.HeadAnswer{Box: sn.BoxName, Snapshot: sn.ID, Name: sn.Name, Message: heads.HeadSetWords(sn.Name, sn.BoxName)})
}
