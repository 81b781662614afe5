package web

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
)

// TestOneFlashPerAction: what a dialog did is said once on the page it
// returns to.
func TestOneFlashPerAction(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{NoWorkers: true})
	const said = "Took a test flash."
	for _, path := range []string{"/boxes", "/approvals", "/boxes/snapshots", "/settings/snapshots", "/boxes/trash"} {
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
	for _, path := range []string{"/settings", "/no/such/page", "/boxes/amber-fox/nothing/here"} {
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
