package web

import (
	"context"
	"html"
	"net/url"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// TestHostsPage: Settings' Hosts lists this host and another, alive; a
// move of a local box to the other host is refused with the core's words
// while its snapshots are on its host only, and marking a host gone that
// was seen alive is refused too, in words.
func TestHostsPage(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{})
	s.env.Box(t, snapshots.Owner(), "amber-fox")
	s.env.TakeReady(t, snapshots.Owner(), "amber-fox", "one")
	if _, err := s.env.Pool.Exec(context.Background(), "INSERT INTO hosts (name) VALUES ('host-b')"); err != nil {
		t.Fatal(err)
	}
	this := s.env.Hosts.This()

	page := s.do(t, "GET", "/settings/hosts", nil, nil).Body.String()
	for _, want := range []string{"<td>" + this + " (this host)</td>", "<td>host-b</td>", `aria-current="page">Hosts</a>`, `name="host" value="` + this + `"`} {
		if !strings.Contains(page, want) {
			t.Fatalf("the Hosts page lacks %q:\n%s", want, page)
		}
	}
	for _, tc := range []struct {
		path  string
		form  url.Values
		words string
	}{
		{"/settings/hosts/move", url.Values{"box": {"amber-fox"}, "host": {"host-b"}},
			"amber-fox's snapshots are on host " + this + " only; set a content store to move boxes between hosts."},
		{"/settings/hosts/host-b/gone", nil, "a host still seen alive keeps its boxes."},
		{"/settings/hosts/host-b/takeover", nil, "a host still seen alive keeps its boxes."},
	} {
		w := s.do(t, "POST", tc.path, tc.form, nil)
		if body := html.UnescapeString(w.Body.String()); w.Code < 400 || !strings.Contains(body, tc.words) {
			t.Fatalf("POST %s: %d, want a refusal saying %q:\n%s", tc.path, w.Code, tc.words, body)
		}
	}
}
