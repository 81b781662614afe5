package web

import (
	"context"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
)

// TestOneFlashPerAction: what a dialog did is said once on the page it
// returns to.
func TestOneFlashPerAction(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{NoWorkers: true})
	const said = "Took a test flash."
	s.env.Box(t, snapshots.Owner(), "amber-fox")
	for _, path := range []string{"/boxes", "/approvals", "/boxes/snapshots", "/settings/snapshots", "/boxes/trash", "/boxes/amber-fox",
		"/settings/templates", "/import", "/boxes/threads"} {
		r := httptest.NewRequest("GET", path, nil)
		r.AddCookie(&http.Cookie{Name: sessionCookie, Value: s.session})
		r.AddCookie(&http.Cookie{Name: flashCookie, Value: url.QueryEscape(said)})
		w := httptest.NewRecorder()
		s.h.ServeHTTP(w, r)
		if n := strings.Count(w.Body.String(), said); n != 1 {
			t.Errorf("%s says its flash %d times", path, n)
		}
	}
}

// TestUnknownPathsAnswerBoxsnap404: a path boxsnap does not have answers
// its own page, in the layout, with a link home; the favicon is served.
func TestUnknownPathsAnswerBoxsnap404(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{NoWorkers: true})
	// Settings' own address leads to its index, not to a 404.
	if w := s.do(t, "GET", "/settings", nil, nil); w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/settings/snapshots" {
		t.Errorf("/settings answered %d to %q", w.Code, w.Header().Get("Location"))
	}
	for _, path := range []string{"/settings/nothing", "/no/such/page", "/boxes/amber-fox/nothing/here"} {
		w := s.do(t, "GET", path, nil, nil)
		body := w.Body.String()
		if w.Code != http.StatusNotFound || !strings.Contains(body, "<!doctype html>") || !strings.Contains(body, `<a href="/">`) ||
			!strings.Contains(body, "No such page") || !strings.Contains(body, `aria-label="Main"`) {
			t.Errorf("%s answered %d:\n%s", path, w.Code, body)
		}
	}
	w := s.do(t, "GET", "/favicon.ico", nil, nil)
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "image/svg+xml" || !strings.Contains(w.Body.String(), "<svg") {
		t.Errorf("/favicon.ico answered %d %s", w.Code, w.Header().Get("Content-Type"))
	}
	if page := s.do(t, "GET", "/boxes", nil, nil).Body.String(); !strings.Contains(page, `<link rel="icon" href="/static/favicon.svg"`) {
		t.Error("the layout links no icon")
	}
	if w := s.do(t, "GET", "/static/favicon.svg", nil, nil); w.Code != http.StatusOK {
		t.Errorf("/static/favicon.svg answered %d", w.Code)
	}
}

// TestForkKeepsDesktop: a fork of a desktop box is labelled Desktop, as its
// source is.
func TestForkKeepsDesktop(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{})
	ctx := context.Background()
	b, err := s.env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "amber-fox", Backend: "local", HasScreen: true})
	if err != nil {
		t.Fatal(err)
	}
	op, sn, err := s.env.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: b.Name, Name: "before the migration"})
	if err != nil {
		t.Fatal(err)
	}
	s.env.Wait(t, op)
	fop, err := s.env.Forks.Fork(ctx, snapshots.Owner(), fork.ForkRequest{Box: b.Name, Snapshot: sn.ID, Name: "amber-fork", AsMachine: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.env.Wait(t, fop); got.State != snapshots.OpDone {
		t.Fatalf("the fork ended %s", got.State)
	}
	for _, name := range []string{"amber-fox", "amber-fork"} {
		page := s.do(t, "GET", "/boxes/"+name, nil, nil).Body.String()
		head := page[strings.Index(page, "<h1>"):]
		head = head[:strings.Index(head, "</div>")]
		if !strings.Contains(head, `<span class="badge kind">Desktop</span>`) {
			t.Errorf("%s's head is not labelled Desktop:\n%s", name, head)
		}
	}
}

// TestSettingsNamesBackendsNotRun: Settings names each backend of the
// specification that boxsnap does not run as not available, with why; none
// is offered as if it ran.
func TestSettingsNamesBackendsNotRun(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{NoWorkers: true})
	body := html.UnescapeString(s.do(t, "GET", "/settings/snapshots/backends", nil, nil).Body.String())
	i := strings.Index(body, `id="not-run"`)
	if i < 0 {
		t.Fatalf("Settings has no list of the backends boxsnap does not run:\n%s", body)
	}
	table := body[i:]
	table = table[:strings.Index(table, "</table>")]
	for _, name := range []string{"microsandbox", "Tart", "boat.dev", "Android devices", "The SSH host pool", "iOS"} {
		row := regexp.MustCompile(`<tr><td>` + regexp.QuoteMeta(name) + ` <span class="badge">not available</span></td><td>([^<]+)</td></tr>`).FindStringSubmatch(table)
		if row == nil || len(row[1]) < 20 {
			t.Errorf("Settings does not name %s as not available, with why:\n%s", name, table)
		}
	}
	offers := body[strings.Index(body, "What each backend offers"):i]
	for _, name := range []string{"microsandbox", "Tart", "boat.dev"} {
		if strings.Contains(offers, name) {
			t.Errorf("%s is among the backends that offer snapshots", name)
		}
	}
}
