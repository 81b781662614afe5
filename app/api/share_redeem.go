package api

import (
	"net/http"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/app/wire"
)

// redeemShare redeems a share code: its copy, without its secrets, becomes
// a new box of the person's. With from, the copy comes from that boxsnap
// (Contents.RedeemFrom). The person only.
func (s snapshotMoves) redeemShare(w http.ResponseWriter, r *http.Request) {
	var body wire.RedeemBody
	if err := decode(r, &body, "code, and from, optional"); err != nil {
		s.fail(w, r, err)
		return
	}
	longTransfer(w)
	var res *contents.ImportResult
	var err error
	if strings.TrimSpace(body.From) != "" {
		res, err = s.contents.RedeemFrom(r.Context(), caller(r), body.From, body.Code)
	} else {
		res, err = s.contents.Redeem(r.Context(), caller(r), body.Code)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}
