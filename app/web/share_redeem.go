package web

import (
	"net/http"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// redeemShare redeems a share code: one of this install's, or with from,
// another's, whose copy is fetched from that boxsnap's share endpoint
// (Contents.RedeemFrom) and imported here.
func (s *Server) redeemShare(w http.ResponseWriter, r *http.Request) {
	code, from := strings.TrimSpace(r.PostFormValue("code")), strings.TrimSpace(r.PostFormValue("from"))
	if from == "" {
		res, err := s.opts.Core.Contents().Redeem(r.Context(), snapshots.Owner(), code)
		s.importResult(w, r, res, err)
		return
	}
	longTransfer(w)
	res, err := s.opts.Core.Contents().RedeemFrom(r.Context(), snapshots.Owner(), from, code)
	s.importResult(w, r, res, err)
}
