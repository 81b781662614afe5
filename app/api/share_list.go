package api

import (
	"github.com/boxsnap/boxsnap/app/wire"
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// listShares lists the share codes, never a code itself: the person only.
func (s *server) listShares(w http.ResponseWriter, r *http.Request) {
	shares, err := s.core.Contents().Shares(r.Context(), caller(r), "")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if shares == nil {
		shares = []*snapshots.Share{}
	}
	writeJSON(w, http.StatusOK, wire.SharesAnswer{Shares: shares})
}
