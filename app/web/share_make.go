package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
)

func (s *Server) showShareDialog(w http.ResponseWriter, r *http.Request) {
	d, err := s.dialogs.ShareDialogOf(asked{r}, chi.URLParam(r, "box"), chi.URLParam(r, "id"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	if rv, ok := s.shown.take(r.URL.Query().Get("shown")); ok {
		showCode(&d, rv)
	}
	s.render(w, r, http.StatusOK, "share", d)
}

// showCode turns the share dialog into the one that shows the code made.
func showCode(d *pagemodel.ShareDialog, rv reveal) {
	d.Title = fmt.Sprintf("The share code for ‘%s’", d.Snapshot)
	d.Code, d.Removed, d.Until = rv.Secret, rv.Removed, rv.Until
}

// makeShare makes the code and shows it in the dialog, once; the answer is
// never cached.
func (s *Server) makeShare(w http.ResponseWriter, r *http.Request) {
	box, id := chi.URLParam(r, "box"), chi.URLParam(r, "id")
	d, err := s.dialogs.ShareDialogOf(asked{r}, box, id)
	if err != nil {
		s.refused(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	days, perr := strconv.Atoi(strings.TrimSpace(r.PostFormValue("days")))
	if perr != nil {
		days = -1
	}
	made, err := s.opts.Contents.MakeShare(r.Context(), snapshots.Owner(), box, id, days)
	if err != nil {
		d.Error = pagemodel.RefusalWords(err)
		s.render(w, r, statusOf(err), "share", d)
		return
	}
	tz := s.opts.Core.TimeZone(r.Context())
	rv := reveal{Secret: made.Code, Removed: made.Share.Removed, Until: made.Share.ExpiresAt.In(tz).Format("Mon 2 Jan 15:04")}
	if r.Header.Get("HX-Request") != "true" {
		// A page of its own: post-redirect-get, so a reload makes no second code.
		http.Redirect(w, r, r.URL.Path+"?"+url.Values{"shown": {s.shown.hold(rv)}, "back": {d.Back}}.Encode(), http.StatusSeeOther)
		return
	}
	showCode(&d, rv)
	s.render(w, r, http.StatusCreated, "share", d)
}
