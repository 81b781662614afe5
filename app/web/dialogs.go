package web

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
	"github.com/boxsnap/boxsnap/views"
)

// flashCookie carries one line to the next page after a post-redirect-get.
const flashCookie = "boxsnap_flash"

// renderDialog answers a dialog: its own page, or the dialog alone for
// htmx (hx-target #dialog-host), which boxsnap.js opens as a modal.
func (s *Server) renderDialog(w http.ResponseWriter, r *http.Request, status int, d pagemodel.Dialog) {
	d.Page = views.Page{Title: d.Title, SignedIn: true, Nav: "boxes"}
	w.Header().Set("Cache-Control", "no-store")
	s.render(w, r, status, "dialog", d)
}

// backOf is where a dialog returns: a path on this site, or the box's page.
func backOf(r *http.Request, box string) string {
	b := r.URL.Query().Get("back")
	if r.Method == http.MethodPost {
		b = r.PostFormValue("back")
	}
	if b == "" {
		return "/boxes/" + url.PathEscape(box)
	}
	return pagemodel.SafeNext(b)
}

// done ends a dialog's post: a flash for the next page, then a redirect
// (HX-Redirect for htmx, 303 otherwise).
func (s *Server) done(w http.ResponseWriter, r *http.Request, back, flash string) {
	if r.Header.Get("HX-Request") == "true" {
		// The dialog goes, and the part of the page it changed is fetched
		// again, with no reload: the box's live part, or the tab's results.
		if ref, ok := refreshOf(back); ok {
			ref.Announce, ref.Back = flash, back
			s.renderBlock(w, http.StatusOK, "dialog", "refresh", ref)
			return
		}
		w.Header().Set("HX-Redirect", back)
		w.WriteHeader(http.StatusOK)
		return
	}
	if flash != "" {
		http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: url.QueryEscape(flash), Path: "/", HttpOnly: true,
			Secure: s.opts.SecureCookies, SameSite: http.SameSiteLaxMode, MaxAge: 60})
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// refresh is what an htmx dialog answers when it is done: which part of
// the page to fetch again.
type refresh struct {
	URL, Target, Announce, Back string
}

func refreshOf(back string) (refresh, bool) {
	u, err := url.Parse(back)
	if err != nil {
		return refresh{}, false
	}
	switch {
	case u.Path == "/boxes/snapshots":
		return refresh{URL: back, Target: "#snapshot-results"}, true
	case strings.HasPrefix(u.Path, "/boxes/") && strings.Count(u.Path, "/") == 2 && u.Path != "/boxes/threads":
		return refresh{URL: u.Path + "/live?in=page&back=" + url.QueryEscape(back), Target: "#box-live"}, true
	}
	return refresh{}, false
}

// flash reads and clears the flash a dialog left, for a page the browser
// loads: an htmx request (a followed page drawing its main again, a part
// fetched after a dialog) never takes it, or a refresh landing between a
// dialog's answer and the page it leads to would take the flash that page
// was to show.
func (s *Server) flash(w http.ResponseWriter, r *http.Request) string {
	if r.Header.Get("HX-Request") == "true" {
		return ""
	}
	c, err := r.Cookie(flashCookie)
	if err != nil || c.Value == "" {
		return ""
	}
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: "", Path: "/", HttpOnly: true, Secure: s.opts.SecureCookies,
		SameSite: http.SameSiteLaxMode, MaxAge: -1})
	v, _ := url.QueryUnescape(c.Value)
	return v
}

// refused answers a refusal with its words and status, or fails.
func (s *Server) refused(w http.ResponseWriter, r *http.Request, err error) {
	if ref, ok := snapshots.AsRefusal(err); ok {
		s.render(w, r, codeStatus(ref.Code), "error", errorPage{Page: views.Page{Title: "Refused", SignedIn: true},
			Title: "Not done", Message: ref.Words})
		return
	}
	s.fail(w, r, err)
}

// postedDialog builds a dialog again for its post and checks that the plan
// it was shown for is the plan now: a stale dialog refuses and shows the
// new plan rather than acting on the old one. When the post must
// go no further it has answered, and ok is false.
func (s *Server) postedDialog(w http.ResponseWriter, r *http.Request, build func(pagemodel.Request, string, string) (pagemodel.Dialog, error)) (d pagemodel.Dialog, box, id string, ok bool) {
	box, id = chi.URLParam(r, "box"), chi.URLParam(r, "id")
	d, err := build(asked{r}, box, id)
	if err != nil {
		s.refused(w, r, err)
		return d, box, id, false
	}
	if d.Disabled {
		s.renderDialog(w, r, http.StatusConflict, d)
		return d, box, id, false
	}
	if r.PostFormValue("plan") != d.Fingerprint {
		d.Error = pagemodel.StaleWords
		s.renderDialog(w, r, http.StatusConflict, d)
		return d, box, id, false
	}
	return d, box, id, true
}

// asked is a request as the builders read it: its context and values, and
// where its dialog returns (backOf).
type asked struct{ *http.Request }

// Back is where a dialog about box returns.
func (a asked) Back(box string) string { return backOf(a.Request, box) }
