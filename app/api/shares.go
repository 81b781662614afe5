package api

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

type shareBody struct {
	// Days is how long the code works, 1 to 30; 0 is the setting (7).
	Days int `json:"days"`
}

// makeShare makes a share code for a snapshot: the person only. The code is
// in this answer and nowhere else, ever.
func (s *server) makeShare(w http.ResponseWriter, r *http.Request) {
	box, ref := param(r, "box"), param(r, "snapshot")
	var body shareBody
	err := decodeOptional(r, &body, "days, optional")
	if err == nil {
		err = checkBoxAndSnapshot(box, ref)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	made, err := s.core.Contents().MakeShare(r.Context(), caller(r), box, ref, body.Days)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, shareAnswer{Code: made.Code, Share: made.Share,
		Message: fmt.Sprintf("This code works until %s; it is shown only now. Its copy leaves out %s.",
			made.Share.ExpiresAt.UTC().Format("2 Jan 2006 15:04 UTC"), made.Share.RemovedWords())})
}

type shareAnswer struct {
	Code    string           `json:"code"`
	Share   *snapshots.Share `json:"share"`
	Message string           `json:"message"`
}

type sharesAnswer struct {
	Shares []*snapshots.Share `json:"shares"`
}

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
	writeJSON(w, http.StatusOK, sharesAnswer{Shares: shares})
}

// revokeShare ends a share code now: the person only.
func (s *server) revokeShare(w http.ResponseWriter, r *http.Request) {
	id := param(r, "share")
	if err := checkRef("share", id); err != nil {
		s.fail(w, r, err)
		return
	}
	sh, err := s.core.Contents().RevokeShare(r.Context(), caller(r), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sh)
}

type codeBody struct {
	Code string `json:"code"`
}

type redeemBody struct {
	Code string `json:"code"`
	// From is the address of the boxsnap that made the code, when it is
	// another: its name and port; boxsnap calls its share endpoint only.
	From string `json:"from"`
}

// redeemShare redeems a share code: its copy, without its secrets, becomes
// a new box of the person's. With from, the copy comes from that boxsnap
// (Contents.RedeemFrom). The person only.
func (s *server) redeemShare(w http.ResponseWriter, r *http.Request) {
	var body redeemBody
	if err := decode(r, &body, "code, and from, optional"); err != nil {
		s.fail(w, r, err)
		return
	}
	longTransfer(w)
	var res *snapshots.ImportResult
	var err error
	if strings.TrimSpace(body.From) != "" {
		res, err = s.core.Contents().RedeemFrom(r.Context(), caller(r), body.From, body.Code)
	} else {
		res, err = s.core.Contents().Redeem(r.Context(), caller(r), body.Code)
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
	e, err := s.core.Contents().PlanShared(r.Context(), body.Code)
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
