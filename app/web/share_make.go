package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/views"
)

// shareDialog is the Share code dialog: what the copy leaves out and how
// long the code works; once made, the code, shown this once.
type shareDialog struct {
	Page                          views.Page
	Title, Snapshot, Action, Back string
	Error, Code, Until            string
	Removed                       []string
	Blocked                       []providers.Finding
	BlockedWord                   string
	Days, MaxDays                 int
	Disabled                      bool
}

func (dlg *dialogBuilder) shareDialogOf(r *http.Request, boxRef, ref string) (shareDialog, error) {
	p, err := dlg.core.Contents().PlanShare(r.Context(), snapshots.Owner(), boxRef, ref)
	if p == nil {
		return shareDialog{}, err
	}
	d := shareDialog{Page: views.Page{Title: "Share code", SignedIn: true, Nav: "boxes"}, Title: fmt.Sprintf("A share code for ‘%s’", p.Snapshot.Name),
		Snapshot: p.Snapshot.Name, Back: backOf(r, p.Box.Name), Removed: p.Removed, Blocked: p.Blocked, BlockedWord: snapshots.BlockedWord, Days: p.Days, MaxDays: snapshots.MaxShareDays,
		Action: fmt.Sprintf("/boxes/%s/snapshots/%s/share", url.PathEscape(p.Box.Name), p.Snapshot.ID)}
	if err != nil {
		d.Disabled, d.Error = true, refusalWords(err)
	}
	return d, nil
}

func (s *Server) showShareDialog(w http.ResponseWriter, r *http.Request) {
	d, err := s.dialogs.shareDialogOf(r, chi.URLParam(r, "box"), chi.URLParam(r, "id"))
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
func showCode(d *shareDialog, rv reveal) {
	d.Title = fmt.Sprintf("The share code for ‘%s’", d.Snapshot)
	d.Code, d.Removed, d.Until = rv.Secret, rv.Removed, rv.Until
}

// makeShare makes the code and shows it in the dialog, once; the answer is
// never cached.
func (s *Server) makeShare(w http.ResponseWriter, r *http.Request) {
	box, id := chi.URLParam(r, "box"), chi.URLParam(r, "id")
	d, err := s.dialogs.shareDialogOf(r, box, id)
	if err != nil {
		s.refused(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	days, perr := strconv.Atoi(strings.TrimSpace(r.PostFormValue("days")))
	if perr != nil {
		days = -1
	}
	made, err := s.opts.Core.Contents().MakeShare(r.Context(), snapshots.Owner(), box, id, days)
	if err != nil {
		d.Error = refusalWords(err)
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
