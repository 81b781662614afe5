package web

import (
	"net/url"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
)

// TestAFollowedRefreshLeavesTheFlash: a page following boxes draws its
// main again with htmx; that request neither shows nor clears the flash a
// dialog left, so the page the dialog led to still shows it.
func TestAFollowedRefreshLeavesTheFlash(t *testing.T) {
	s := newSite(t, coretest.Options{NoWorkers: true})
	cookie := sessionCookie + "=" + s.session + "; " + flashCookie + "=" + url.QueryEscape("Restoring dusky-dune from the trash.")
	w := s.do(t, "GET", "/boxes/trash", nil, map[string]string{"Cookie": cookie, "HX-Request": "true"})
	if strings.Contains(w.Body.String(), "Restoring dusky-dune") || strings.Contains(w.Header().Get("Set-Cookie"), flashCookie) {
		t.Fatalf("an htmx refresh took the flash: %q, Set-Cookie %q", w.Body.String(), w.Header().Get("Set-Cookie"))
	}
	w = s.do(t, "GET", "/boxes/trash", nil, map[string]string{"Cookie": cookie})
	if !strings.Contains(w.Body.String(), "Restoring dusky-dune from the trash.") {
		t.Fatal("the page the browser loads does not show the flash")
	}
}
