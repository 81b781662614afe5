package web

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	"github.com/boxsnap/boxsnap/views"
)

// flashCookie carries one line to the next page after a post-redirect-get.
const flashCookie = "boxsnap_flash"

// dialog is every dialog's view data: an alert dialog whose focus starts
// on its safe choice; Kind picks its fields.
type dialog struct {
	Page        views.Page
	Kind        string // take, restore, fork, keep, delete, rename, note, bulk
	Title       string
	Action      string
	Back        string
	Error       string
	Lines       []string
	Goes        []string
	After       []string
	Fingerprint string
	Submit      string
	RequestID   string
	Danger      bool
	Disabled    bool // the plan refuses: only Cancel

	// Take, Rename, Note.
	Name, NamePlaceholder, Note string
	OfferMemory                 bool
	MemoryLine                  string

	// Restore.
	// Changes says what a restore changes back ("14 files changed, 2
	// added, 1 removed since then"), where the backend can tell, and
	// ChangesHref lists them.
	Changes, ChangesHref string
	UndoOffered          bool
	UndoLocked           bool
	UndoLine             string
	NoUndo               bool
	Force                bool
	SubmitNoUndo         string

	// Keep.
	// Until is the date in the field, year-month-day, as it is sent back;
	// UntilWords the same day as the words say it ("Sat 2 Jan 2027").
	Until, MinDate, MaxDate, UntilWords string

	// Fork: where the new box goes, when there is a choice; Count is how
	// many boxes (1 unless the person asked for more), at most MaxCount.
	Places          []place
	Count, MaxCount int

	// Bulk.
	Action2 string
	IDs     []string // the ones it would act on
	Picked  []string // every one ticked, sent back to be checked again
	Items   []string
	Skipped []string
}

// dialogBuilder builds the dialogs' view data from the core's plans: what
// each action would do, what goes, what it costs, and why it is refused.
// It holds only what building them reads: the core, and the row builder
// for the words a row and its dialog share (where a box lives, whether
// restores are off). Each dialog's builder lives in the file of the action
// it asks for (restoreDialog in snapshot_restore.go).
type dialogBuilder struct {
	core     *snapshots.Service
	restores *restore.Restores
	boxes    *boxes.Boxes
	forks    *fork.Forks
	contents *contents.Contents
	rows     *rowBuilder
}

// renderDialog answers a dialog: its own page, or the dialog alone for
// htmx (hx-target #dialog-host), which boxsnap.js opens as a modal.
func (s *Server) renderDialog(w http.ResponseWriter, r *http.Request, status int, d dialog) {
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
	return safeNext(b)
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

// flash reads and clears the flash a dialog left.
func (s *Server) flash(w http.ResponseWriter, r *http.Request) string {
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

// fingerprint is a dialog's plan in a few bytes: the snapshot's state and
// keep, the box's generation and state, and the guard list. A dialog sends
// it back, and a post whose plan changed meanwhile is refused and shows
// the new plan rather than acting on the old one.
func fingerprint(b *snapshots.Box, sn *snapshots.Snapshot, guard []string, extra ...string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s|%d|%s|", b.ID, b.Generation, b.State)
	if sn != nil {
		kept := ""
		if sn.KeptUntil != nil {
			kept = sn.KeptUntil.Format(time.RFC3339)
		}
		fmt.Fprintf(h, "%s|%s|%s|%s|", sn.ID, sn.State, kept, sn.Guest)
	}
	fmt.Fprintf(h, "%s|%s", strings.Join(guard, "\n"), strings.Join(extra, "\n"))
	return hex.EncodeToString(h.Sum(nil))[:20]
}

// staleWords is what a dialog says when its plan changed since it opened.
const staleWords = "This changed since the dialog opened, so nothing was done. Read it again: it shows what would happen now."

// agoWords says how long ago, "2 h 5 min".
func agoWords(d time.Duration) string {
	d = d.Round(time.Minute)
	h, m := int(d.Hours()), int(d.Minutes())%60
	switch {
	case h >= 48:
		return fmt.Sprintf("%d days", h/24)
	case h > 0 && m > 0:
		return fmt.Sprintf("%d h %d min", h, m)
	case h > 0:
		return fmt.Sprintf("%d h", h)
	case m > 0:
		return fmt.Sprintf("%d min", m)
	}
	return "less than a minute"
}

// aboutWords says an estimate, "About 15 s".
func aboutWords(d time.Duration) string {
	switch {
	case d <= time.Second:
		return "About 1 s"
	case d < time.Minute:
		return fmt.Sprintf("About %d s", int(d.Round(time.Second).Seconds()))
	}
	return fmt.Sprintf("About %d min", int(d.Round(time.Minute).Minutes()))
}

// postedDialog builds a dialog again for its post and checks that the plan
// it was shown for is the plan now: a stale dialog refuses and shows the
// new plan rather than acting on the old one. When the post must
// go no further it has answered, and ok is false.
func (s *Server) postedDialog(w http.ResponseWriter, r *http.Request, build func(*http.Request, string, string) (dialog, error)) (d dialog, box, id string, ok bool) {
	box, id = chi.URLParam(r, "box"), chi.URLParam(r, "id")
	d, err := build(r, box, id)
	if err != nil {
		s.refused(w, r, err)
		return d, box, id, false
	}
	if d.Disabled {
		s.renderDialog(w, r, http.StatusConflict, d)
		return d, box, id, false
	}
	if r.PostFormValue("plan") != d.Fingerprint {
		d.Error = staleWords
		s.renderDialog(w, r, http.StatusConflict, d)
		return d, box, id, false
	}
	return d, box, id, true
}
