package web

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// TestJobsBackLink: River's dashboard page gets the way back to boxsnap at
// the top of its body; its API answers and assets pass unchanged.
func TestJobsBackLink(t *testing.T) {
	river := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ".js") {
			w.Header().Set("Content-Type", "text/javascript")
			_, _ = w.Write([]byte("let body = '<body>';"))
			return
		}
		if strings.Contains(r.URL.Path, "/api/") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"html":"<body>"}`))
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><html><head></head><body class="river"><div id="root"></div></body></html>`))
	})
	h := withBackLink(river)
	for _, c := range []struct {
		path string
		bar  bool
	}{{"/jobs/", true}, {"/jobs/jobs/12", true}, {"/jobs/api/jobs", false}, {"/jobs/assets/index.js", false}} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", c.path, nil))
		body := w.Body.String()
		has := strings.Contains(body, `<body class="river"><a href="/boxes"`)
		if has != c.bar || w.Code != http.StatusOK {
			t.Fatalf("%s: bar %v, want %v (%d):\n%s", c.path, has, c.bar, w.Code, body)
		}
		if c.bar && w.Header().Get("Content-Length") != "" && w.Header().Get("Content-Length") != strconv.Itoa(len(body)) {
			t.Fatalf("%s: Content-Length %s for %d bytes", c.path, w.Header().Get("Content-Length"), len(body))
		}
	}
}

// TestJobsBarLeavesRiversTopFree: the way back floats in the bottom right
// corner, fixed, so it covers neither River's logo nor the top of its
// sidebar, both fixed at the top left of the window.
func TestJobsBarLeavesRiversTopFree(t *testing.T) {
	style := jobsBanner[strings.Index(jobsBanner, `style="`):]
	style = style[:strings.Index(style[7:], `"`)+7]
	for _, want := range []string{"position:fixed", "right:16px", "bottom:16px"} {
		if !strings.Contains(style, want) {
			t.Errorf("the bar's style %q lacks %s", style, want)
		}
	}
	for _, not := range []string{"top:", "sticky", "left:", "width:100%"} {
		if strings.Contains(style, not) {
			t.Errorf("the bar's style %q has %s: it would cover the top of River's page", style, not)
		}
	}
}
