package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/mxschmitt/playwright-go"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

func launch(t *testing.T) *Browser {
	t.Helper()
	br, err := Launch()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = br.Close() })
	return br
}

// apiCounts reads the API's list and returns each box's count words and
// counted numbers.
func apiCounts(t *testing.T, e *env) map[string]struct {
	Count   string
	Counted snapshots.Counts
} {
	t.Helper()
	_, token, err := e.s.Auth.CreateAPIToken(context.Background(), "counts")
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", e.s.URL+"/api/v1/snapshots", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v1/snapshots: %s", res.Status)
	}
	var ans struct {
		Boxes []struct {
			Box     struct{ Name string }
			Count   string
			Counted snapshots.Counts
		}
	}
	if err := json.NewDecoder(res.Body).Decode(&ans); err != nil {
		t.Fatal(err)
	}
	out := map[string]struct {
		Count   string
		Counted snapshots.Counts
	}{}
	for _, b := range ans.Boxes {
		out[b.Box.Name] = struct {
			Count   string
			Counted snapshots.Counts
		}{b.Count, b.Counted}
	}
	return out
}

// TestCountsAgree: the Machines tab, each box's card, the Snapshots tab's
// line and badge, and the API give the same numbers for the demo, by the
// one counting rule, with what is counted named.
func TestCountsAgree(t *testing.T) {
	t.Parallel()
	e := setup(t, launch(t), 1440)
	want := map[string]string{
		"amber-fox":  "2 snapshots",
		"brisk-lake": "3 snapshots: 1 undo",
		"grey-ridge": "1 snapshot: 1 kept",
		"dusky-dune": "No snapshots",
	}
	const total, totalWords = 6, "6 snapshots: 1 kept, 1 undo"
	e.gotoPage(t, "/boxes")
	for box, w := range want {
		row := e.page.Locator("li.card").Filter(playwright.LocatorFilterOptions{Has: e.page.Locator("h2 a", playwright.PageLocatorOptions{HasText: box})})
		got, err := row.Locator(".count-words").InnerText()
		if err != nil {
			t.Fatalf("Machines has no count for %s: %v", box, err)
		}
		if got != w {
			t.Errorf("Machines says %q for %s, want %q", got, box, w)
		}
	}
	api := apiCounts(t, e)
	sum := 0
	for box, w := range want {
		if box == "grey-ridge" || box == "dusky-dune" {
			// A released box has no card; a box with none is listed only
			// where it has snapshots.
		} else {
			e.gotoPage(t, "/boxes/"+box)
			if head := e.text(t, "#snapshots-card .chead .muted"); !strings.HasPrefix(head, w+" · ") {
				t.Errorf("%s's card says %q, want it to start %q", box, head, w)
			}
		}
		if a, ok := api[box]; ok {
			if a.Count != w {
				t.Errorf("the API says %q for %s, want %q", a.Count, box, w)
			}
			sum += a.Counted.All
		} else if w != "No snapshots" {
			t.Errorf("the API does not list %s", box)
		}
	}
	if sum != total {
		t.Errorf("the API's counts add up to %d, want %d", sum, total)
	}
	e.gotoPage(t, "/boxes/snapshots")
	if badge := e.text(t, ".tabs a[aria-current] .count"); badge != fmt.Sprint(total) {
		t.Errorf("the tab's badge says %s, want %d", badge, total)
	}
	if line := e.text(t, ".tabline .summary"); !strings.HasPrefix(line, totalWords+" · ") {
		t.Errorf("the tab's line says %q, want it to start %q", line, totalWords)
	}
	e.gotoPage(t, "/boxes")
	if badge := e.text(t, ".tabs a[href='/boxes/snapshots'] .count"); badge != fmt.Sprint(total) {
		t.Errorf("the Machines tab's Snapshots badge says %s, want %d", badge, total)
	}
}

var undoHolds = regexp.MustCompile(`Holds brisk-lake at \d\d:\d\d, before restoring to ‘clean install’\.`)

// TestNowRowAndRestoredMark: a box's list starts with a Now row saying
// where the box is; the snapshot it was last restored to is marked; an undo
// says what it holds; after the Undo, the mark moves to the undo and the
// notice says what the undo held.
func TestNowRowAndRestoredMark(t *testing.T) {
	t.Parallel()
	e := setup(t, launch(t), 1440)
	e.gotoPage(t, "/boxes/brisk-lake")
	first := e.page.Locator("#snapshots-card ul.rows > li").First()
	if id, _ := first.GetAttribute("id"); id != "now-row" {
		t.Fatalf("brisk-lake's list starts with %q, want the Now row", id)
	}
	now := e.text(t, "#now-row")
	if !strings.HasPrefix(now, "Now") || !strings.Contains(now, "restored today at") || !strings.Contains(now, "to ‘clean install’") {
		t.Fatalf("the Now row says %q", now)
	}
	clean := e.rowID(t, "clean install")
	if mark := e.text(t, "#snap-"+clean+" .badge.mark"); !strings.HasPrefix(mark, "Restored to this at ") {
		t.Fatalf("the restored snapshot's mark says %q", mark)
	}
	if n, _ := e.page.Locator(".badge.mark").Count(); n != 1 {
		t.Fatalf("%d rows are marked restored, want 1", n)
	}
	undo := snapshotNamed(t, e.s, "brisk-lake", undoName(t, e.s, "brisk-lake"))
	if h := e.text(t, "#snap-"+undo.ID+" .what"); !undoHolds.MatchString(h) {
		t.Fatalf("the undo's row does not say what it holds:\n%s", h)
	}
	// Undo: restore the undo. The mark moves; the notice says what the
	// undo held.
	op, err := e.s.Restores.Restore(context.Background(), snapshots.Owner(), snapshots.RestoreRequest{Box: "brisk-lake", Snapshot: undo.ID})
	if err != nil {
		t.Fatal(err)
	}
	if op, err = e.s.Wait(context.Background(), op); err != nil || op.State != snapshots.OpDone {
		t.Fatalf("the undo: %v %v", op, err)
	}
	e.gotoPage(t, "/boxes/brisk-lake")
	if now := e.text(t, "#now-row"); !strings.Contains(now, "to ‘"+undo.Name+"’") {
		t.Fatalf("after the Undo the Now row says %q", now)
	}
	if mark := e.text(t, "#snap-"+undo.ID+" .badge.mark"); !strings.HasPrefix(mark, "Restored to this at ") {
		t.Fatalf("after the Undo the undo is not marked: %q", mark)
	}
	if n, _ := e.page.Locator(".badge.mark").Count(); n != 1 {
		t.Fatalf("%d rows are marked restored after the Undo, want 1", n)
	}
	notice := e.text(t, ".notice")
	if !strings.Contains(notice, "to ‘"+undo.Name+"’ (brisk-lake as it was at ") || !strings.Contains(notice, "before restoring to ‘clean install’)") {
		t.Fatalf("the notice after the Undo does not say what the undo held:\n%s", notice)
	}
	// A box never restored: the Now row says whether it changed since its
	// head, as its backend answers; nobody touched amber-fox since.
	e.gotoPage(t, "/boxes/amber-fox")
	if now := e.text(t, "#now-row"); !strings.Contains(now, "unchanged since ‘before the migration’") {
		t.Fatalf("amber-fox's Now row says %q", now)
	}
}

// undoName is the name of box's one undo.
func undoName(t *testing.T, s *Stack, box string) string {
	t.Helper()
	for _, sn := range mustList(t, s, box) {
		if sn.IsUndo() {
			return sn.Name
		}
	}
	t.Fatalf("%s has no undo", box)
	return ""
}

// TestBoxHistoryCard: a box's page shows its log, newest first, with who
// did what, paged.
func TestBoxHistoryCard(t *testing.T) {
	t.Parallel()
	e := setup(t, launch(t), 1440)
	e.gotoPage(t, "/boxes/amber-fox")
	h := e.text(t, "#history")
	for _, want := range []string{"Snapshot taken: ‘before the migration’", "by the agent in Fix the sign-in flow", "Snapshot taken: ‘Thu 09:15’", "by you"} {
		if !strings.Contains(h, want) {
			t.Fatalf("the History card does not say %q:\n%s", want, h)
		}
	}
	if strings.Index(h, "‘before the migration’") > strings.Index(h, "‘Thu 09:15’") {
		t.Fatalf("the History card is not newest first:\n%s", h)
	}
	// Keep and stop keeping six times: twelve more events, more than a
	// page.
	ctx := context.Background()
	for i := 0; i < 6; i++ {
		op, err := e.s.Keeps.Keep(ctx, snapshots.Owner(), snapshots.KeepRequest{Box: "amber-fox", Snapshot: e.demo.Migration.ID, Days: 3})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.Wait(ctx, op); err != nil {
			t.Fatal(err)
		}
		if op, err = e.s.Keeps.Unkeep(ctx, snapshots.Owner(), snapshots.KeepRequest{Box: "amber-fox", Snapshot: e.demo.Migration.ID}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.Wait(ctx, op); err != nil {
			t.Fatal(err)
		}
	}
	e.gotoPage(t, "/boxes/amber-fox")
	if n, _ := e.page.Locator("#history li").Count(); n != 10 {
		t.Fatalf("the History card shows %d events, want a page of 10", n)
	}
	if h := e.text(t, "#history li"); !strings.HasPrefix(h, "Today ") || !strings.Contains(h, "Stopped keeping") || !strings.Contains(h, "by you") {
		t.Fatalf("the newest event reads %q", h)
	}
	if err := e.page.Locator("#history a", playwright.PageLocatorOptions{HasText: "Show older"}).Click(); err != nil {
		t.Fatal(err)
	}
	if err := e.page.WaitForURL("**/boxes/amber-fox?log=20#history"); err != nil {
		t.Fatal(err)
	}
	if n, _ := e.page.Locator("#history li").Count(); n <= 10 {
		t.Fatalf("Show older shows %d events", n)
	}
	if h := e.text(t, "#history"); !strings.Contains(h, "‘Thu 09:15’") {
		t.Fatalf("the older page does not reach the first take:\n%s", h)
	}
}

// TestSelectAt390: at 390 px, Select shows a tick on each row that is its
// own size, the row's words keep their width, and the bar says how many
// are ticked.
func TestSelectAt390(t *testing.T) {
	t.Parallel()
	e := setup(t, launch(t), 390)
	e.gotoPage(t, "/boxes/snapshots?select=1")
	if s := e.text(t, "#picked-count"); s != "Tick snapshots, then" {
		t.Fatalf("the bar says %q before any tick", s)
	}
	for _, id := range []string{e.demo.Migration.ID, e.rowID(t, "clean install")} {
		if err := e.page.Locator("#snap-" + id + " label.pickbox").Click(); err != nil {
			t.Fatal(err)
		}
		box, err := e.page.Locator("#pick-" + id).BoundingBox()
		if err != nil {
			t.Fatal(err)
		}
		if box.Width > 32 {
			t.Fatalf("a tick is %.0f px wide", box.Width)
		}
		what, err := e.page.Locator("#snap-" + id + " .what").BoundingBox()
		if err != nil {
			t.Fatal(err)
		}
		if what.Width < 200 {
			t.Fatalf("a ticked row's words are squeezed into %.0f px", what.Width)
		}
	}
	e.waitText(t, "#picked-count", "2 ticked:")
	if err := e.page.Locator("button[value=keep]").Click(); err != nil {
		t.Fatal(err)
	}
	e.waitText(t, "dialog h2", "Keep 2 snapshots")
}

// TestMenuAt390: at 390 px a row's ⋯ menu opens inside the window, with
// Fork…, Rename…, Keep… and Delete… all on screen.
func TestMenuAt390(t *testing.T) {
	t.Parallel()
	e := setup(t, launch(t), 390)
	e.gotoPage(t, "/boxes/amber-fox")
	mig := e.demo.Migration.ID
	if err := e.page.Locator("#menu-" + mig).Click(); err != nil {
		t.Fatal(err)
	}
	for _, item := range []string{"Fork…", "Rename…", "Keep…", "Delete…"} {
		loc := e.page.Locator("#snap-"+mig+" .items .item", playwright.PageLocatorOptions{HasText: item}).First()
		box, err := loc.BoundingBox()
		if err != nil || box == nil {
			t.Fatalf("%s is not shown: %v", item, err)
		}
		if box.X < 0 || box.X+box.Width > 390 {
			t.Fatalf("%s is off screen: x %.0f to %.0f in a 390 px window", item, box.X, box.X+box.Width)
		}
	}
	if v, _ := e.page.Locator("#fork-" + mig).IsVisible(); v {
		t.Fatal("Fork shows beside Restore at 390 px: it moves into the menu there")
	}
	// Fork… from the menu opens its dialog.
	if err := e.page.Locator("#snap-"+mig+" .items a.item", playwright.PageLocatorOptions{HasText: "Fork…"}).Click(); err != nil {
		t.Fatal(err)
	}
	e.waitText(t, "dialog[open] h2", "Fork")
}

// TestRestoreToast: a restore the person starts from the Snapshots tab says
// how it ended in a toast, once, since they are not on the box's page.
func TestRestoreToast(t *testing.T) {
	t.Parallel()
	e := setup(t, launch(t), 1440)
	e.gotoPage(t, "/boxes/snapshots")
	mig := e.demo.Migration.ID
	if err := e.page.Locator("#snap-" + mig).Hover(); err != nil {
		t.Fatal(err)
	}
	if err := e.page.Locator("#restore-" + mig).Click(); err != nil {
		t.Fatal(err)
	}
	e.shown(t)
	if err := e.page.Locator("dialog[open] button[type=submit]").Click(); err != nil {
		t.Fatal(err)
	}
	e.waitText(t, ".toast", "amber-fox was restored to ‘before the migration’.")
	// Once: the next page has no toast.
	e.gotoPage(t, "/boxes/threads")
	if err := e.page.WaitForLoadState(playwright.PageWaitForLoadStateOptions{State: playwright.LoadStateNetworkidle}); err != nil {
		t.Fatal(err)
	}
	if n, _ := e.page.Locator(".toast").Count(); n != 0 {
		t.Fatalf("the toast came again: %d", n)
	}
	if c, _ := e.page.Context().Cookies(); len(c) > 0 {
		for _, k := range c {
			if k.Name == "boxsnap_watch" {
				t.Fatalf("the restore is still watched: %q", k.Value)
			}
		}
	}
}
