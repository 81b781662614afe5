package web

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
)

// menuItems reads the texts of a row's menu items, in order.
func menuItems(t *testing.T, page, id string) []string {
	t.Helper()
	start := strings.Index(page, `id="snap-`+id+`"`)
	if start < 0 {
		t.Fatalf("no row %s on the page", id)
	}
	row := page[start:]
	row = row[strings.Index(row, `<div class="items">`):]
	row = row[:strings.Index(row, "</div>")]
	var out []string
	for _, m := range regexp.MustCompile(`class="item[^"]*"[^>]*>([^<]+)`).FindAllStringSubmatch(row, -1) {
		out = append(out, strings.TrimSpace(html.UnescapeString(m[1])))
	}
	return out
}

// TestUnsaveAsksFirst: Unsave… asks, with what happens, before a snapshot
// goes back to the automatic history, as a page with a form that needs no
// script; the menus put the safe actions first and those that put the
// snapshot at risk last.
func TestUnsaveAsksFirst(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{})
	ctx := context.Background()
	b := s.env.Box(t, snapshots.Owner(), "amber-fox")
	op, sn, err := s.env.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: b.Name, Name: "before the migration"})
	if err != nil {
		t.Fatal(err)
	}
	s.env.Wait(t, op)
	kop, err := s.env.Keeps.Keep(ctx, snapshots.Owner(), snapshots.KeepRequest{Box: b.Name, Snapshot: sn.ID, Days: 30})
	if err != nil {
		t.Fatal(err)
	}
	s.env.Wait(t, kop)
	page := s.do(t, "GET", "/boxes/amber-fox", nil, nil).Body.String()
	items := menuItems(t, page, sn.ID)
	order := func(text string) int {
		for i, it := range items {
			if strings.HasPrefix(it, text) {
				return i
			}
		}
		t.Fatalf("the menu has no %s: %q", text, items)
		return -1
	}
	safe := []string{"Rename…", "Note…", "Keep", "Copy ID"}
	risky := []string{"Unsave…", "Stop keeping", "Delete…"}
	for i := 1; i < len(safe); i++ {
		if order(safe[i-1]) > order(safe[i]) {
			t.Errorf("%s comes after %s: %q", safe[i-1], safe[i], items)
		}
	}
	for _, r := range risky {
		if order(r) < order("Copy ID") {
			t.Errorf("%s comes before the safe actions: %q", r, items)
		}
	}
	if order("Unsave…") > order("Stop keeping") || order("Stop keeping") > order("Delete…") {
		t.Errorf("the risky actions are not Unsave…, Stop keeping, Delete…: %q", items)
	}
	if strings.Contains(page, `action="/boxes/amber-fox/snapshots/`+sn.ID+`/unsave"`) {
		t.Error("the menu's Unsave acts at once, with no question")
	}

	path := "/boxes/amber-fox/snapshots/" + sn.ID + "/unsave"
	w := s.do(t, "GET", path, nil, nil)
	body := html.UnescapeString(w.Body.String())
	want := "‘before the migration’ goes back to amber-fox's automatic history, where thinning may delete it as it ages."
	if w.Code != http.StatusOK || !strings.Contains(body, "<!doctype html>") || !strings.Contains(body, want) || !strings.Contains(body, `method="post"`) {
		t.Fatalf("the Unsave dialog's page answered %d, without %q or a form:\n%s", w.Code, want, body)
	}
	m := planField.FindStringSubmatch(body)
	if m == nil {
		t.Fatal("the Unsave dialog has no plan")
	}
	// A post that skipped the dialog changes nothing.
	if w := s.do(t, "POST", path, url.Values{"back": {"/boxes/amber-fox"}}, nil); w.Code != http.StatusConflict {
		t.Fatalf("an unsave without its dialog answered %d", w.Code)
	}
	got, _, _ := s.env.Core.SnapshotOfBox(ctx, snapshots.Owner(), b.Name, sn.ID)
	if got.Automatic {
		t.Fatal("an unsave without its dialog made the snapshot automatic")
	}
	if w := s.do(t, "POST", path, url.Values{"plan": {m[1]}, "back": {"/boxes/amber-fox"}}, nil); w.Code != http.StatusSeeOther {
		t.Fatalf("the dialog's Unsave answered %d:\n%s", w.Code, w.Body)
	}
	got, _, _ = s.env.Core.SnapshotOfBox(ctx, snapshots.Owner(), b.Name, sn.ID)
	if !got.Automatic {
		t.Fatal("the dialog's Unsave left the snapshot saved")
	}
}
