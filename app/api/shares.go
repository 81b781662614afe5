package api

import (
	"fmt"
	"github.com/boxsnap/boxsnap/app/wire"
	"net/http"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots/contents"
)

// makeShare makes a share code for a snapshot: the person only. The code is
// in this answer and nowhere else, ever.
func (s *server) makeShare(w http.ResponseWriter, r *http.Request) {
	box, ref := param(r, "box"), param(r, "snapshot")
	var body wire.ShareBody
	err := decodeOptional(r, &body, "days, optional")
	if err == nil {
		err = checkBoxAndSnapshot(box, ref)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	made, err := s.contents.MakeShare(r.Context(), caller(r), box, ref, body.Days)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, wire.ShareAnswer{Code: made.Code, Share: made.Share,
		Message: fmt.Sprintf("This code works until %s; it is shown only now. Its copy leaves out %s.",
			made.Share.ExpiresAt.UTC().Format("2 Jan 2006 15:04 UTC"), made.Share.RemovedWords())})
}

// listShares lists the share codes, never a code itself: the person only.
func (s *server) listShares(w http.ResponseWriter, r *http.Request) {
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

// revokeShare ends a share code now: the person only.
func (s *server) revokeShare(w http.ResponseWriter, r *http.Request) {
	id := param(r, "share")
	if err := checkRef("share", id); err != nil {
		s.fail(w, r, err)
		return
	}
	sh, err := s.contents.RevokeShare(r.Context(), caller(r), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sh)
}

type codeBody struct {
	Code string `json:"code"`
}

// redeemShare redeems a share code: its copy, without its secrets, becomes
// a new box of the person's. With from, the copy comes from that boxsnap
// (Contents.RedeemFrom). The person only.
func (s *server) redeemShare(w http.ResponseWriter, r *http.Request) {
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

// sharedCopy streams a share code's copy as an export file, to whoever
// holds the code: another install imports it (boxsnap snapshot redeem
// --from). The code is the only authority; it travels in the body, never
// in a URL that logs keep.
func (s *server) sharedCopy(w http.ResponseWriter, r *http.Request) {
	var body codeBody
	if err := decode(r, &body, "code"); err != nil {
		s.fail(w, r, err)
		return
	}
	e, err := s.contents.PlanShared(r.Context(), body.Code)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	longTransfer(w)
	w.Header().Set("Content-Type", "application/x-tar")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", e.FileName()))
	if err := e.WriteTo(r.Context(), w); err != nil {
		s.logger.Warn("shared copy cut short", "err", err)
		panic(http.ErrAbortHandler) // an error to the client, never a whole file
	}
}
