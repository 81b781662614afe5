package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/app/wire"
)

// listShares lists the share codes, never a code itself: the person only.
func (s snapshotMoves) listShares(w http.ResponseWriter, r *http.Request) {
	shares, err := s.contents.Shares(r.Context(), caller(r), "")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if shares == nil {
		shares = []*contents.Share{}
	}
	writeJSON(w, http.StatusOK, wire.SharesAnswer{Shares: shares})
}
