package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// TestEveryOpenPageFollows: a box's page open in one tab follows every
// change to the box without a reload, whoever makes it: the person in a
// second tab, an agent over the JSON tools, and a sweep. Each change shows
// in every part it touches (the Snapshots card, the Head fact, the
// history), while a row's menu stays open with the focus inside it. The
// Boxes page follows too: a box released elsewhere moves to its Trash tab's
// count.
func TestEveryOpenPageFollows(t *testing.T) {
	br, err := Launch()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = br.Close() })
	e := setup(t, br, 1440)
	ctx := context.Background()
	th, token, err := e.s.Boxes.CreateThread(ctx, snapshots.Owner(), "Tidy the build")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "calm-moss", Backend: "local", Thread: th.ID}); err != nil {
		t.Fatal(err)
	}
	first, err := e.s.Take(ctx, snapshots.Owner(), "calm-moss", "before my edit", "")
	if err != nil {
		t.Fatal(err)
	}
	keep, err := e.s.Keeps.Keep(ctx, snapshots.Owner(), snapshots.KeepRequest{Box: "calm-moss", Snapshot: first.ID, Days: 30})
	if err != nil {
		t.Fatal(err)
	}
	if op, err := e.s.Wait(ctx, keep); err != nil || op.State != snapshots.OpDone {
		t.Fatalf("keep ‘before my edit’: %v %v", op, err)
	}

	// The row whose menu stays open: no change below touches it.
	steady, err := e.s.Take(ctx, snapshots.Owner(), "calm-moss", "steady", "")
	if err != nil {
		t.Fatal(err)
	}

	e.gotoPage(t, "/boxes/calm-moss")
	following(t, e.page)
	e.mark(t)
	// A row's menu, opened by keyboard, with the focus inside it.
	menu := "#snap-" + steady.ID + " details.menu[open]"
	e.tabTo(t, "#snap-"+steady.ID+" details.menu summary")
	e.press(t, "Enter")
	if err := e.page.Locator(menu).WaitFor(); err != nil {
		t.Fatalf("Enter did not open the row's menu: %v", err)
	}
	e.press(t, "Tab")
	inside := e.focused(t)

	// follows waits until the first tab shows name in the Snapshots card,
	// as the Head fact and in the history, with the menu still open and
	// the focus where it was, and no reload.
	follows := func(who, name string) {
		t.Helper()
		for _, sel := range []string{"#snapshots-card", ".card.facts", "#history"} {
			if _, err := e.page.WaitForFunction(`([sel, name]) => { const el = document.querySelector(sel); return el && el.textContent.includes(name); }`,
				[]string{sel, "‘" + name + "’"}); err != nil {
				t.Fatalf("after %s, the first tab's %s does not show ‘%s’ without a reload: %v\n%s", who, sel, name, err, e.text(t, "main"))
			}
		}
		if open, err := e.page.Locator(menu).Count(); err != nil || open != 1 {
			t.Errorf("after %s, the open menu closed (%d open, %v)", who, open, err)
		}
		if f := e.focused(t); f != inside {
			t.Errorf("after %s, the focus moved from %q to %q", who, inside, f)
		}
		e.noReload(t)
	}

	// The person, in a second tab.
	second, err := e.page.Context().NewPage()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := second.Goto(e.s.URL + "/boxes/calm-moss"); err != nil {
		t.Fatal(err)
	}
	if _, err := second.Evaluate(`async () => {
		const r = await fetch("/boxes/calm-moss/take", {method: "POST", headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: "name=" + encodeURIComponent("from the second tab")});
		if (!r.ok) throw new Error("take: " + r.status);
	}`); err != nil {
		t.Fatal(err)
	}
	follows("a take in a second tab", "from the second tab")

	// An agent, over the JSON tools.
	body, _ := json.Marshal(map[string]any{"box": "calm-moss", "name": "by the agent"})
	req, _ := http.NewRequest("POST", e.s.URL+"/api/v1/tools/box_snapshot", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode >= 300 {
		t.Fatalf("box_snapshot: %s", res.Status)
	}
	follows("the agent's box_snapshot", "by the agent")

	// A sweep: the keep of ‘before my edit’ ended, and the expiry lets it
	// go: the row goes, or at least its Kept badge.
	if _, err := e.s.Pool.Exec(ctx, "UPDATE snapshots SET kept_until = now() - interval '2 days' WHERE id = $1", first.ID); err != nil {
		t.Fatal(err)
	}
	ops, err := e.s.Sweeps.ExpireKeeps(ctx)
	if err != nil || len(ops) == 0 {
		t.Fatalf("the expiry sweep let nothing go: %v %v", ops, err)
	}
	for _, op := range ops {
		if _, err := e.s.Wait(ctx, op); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.page.WaitForFunction(`(id) => { const row = document.getElementById("snap-" + id); return !row || !/\bKept\b/.test(row.querySelector(".name").textContent); }`, first.ID); err != nil {
		t.Fatalf("after the expiry sweep, the first tab still says ‘before my edit’ is kept: %v\n%s", err, e.text(t, "#snapshots-card"))
	}
	if open, err := e.page.Locator(menu).Count(); err != nil || open != 1 {
		t.Errorf("after the sweep, the open menu closed (%d open, %v)", open, err)
	}
	if f := e.focused(t); f != inside {
		t.Errorf("after the sweep, the focus moved from %q to %q", inside, f)
	}
	e.noReload(t)

	// The Boxes page, in the second tab, follows a release made elsewhere:
	// the box leaves Machines and the Trash tab counts it.
	if _, err := second.Goto(e.s.URL + "/boxes"); err != nil {
		t.Fatal(err)
	}
	if err := second.Locator("body[data-following]").WaitFor(); err != nil {
		t.Fatalf("the Boxes page does not follow the boxes: %v", err)
	}
	trash := func() string {
		s, err := second.Locator(`nav.tabs a[href="/boxes/trash"] .count`).TextContent()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(s)
	}
	before := trash()
	rel, err := e.s.Boxes.ReleaseBox(ctx, snapshots.Owner(), e.demo.DuskyDune.Name, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Wait(ctx, rel); err != nil {
		t.Fatal(err)
	}
	if _, err := second.WaitForFunction(`(before) => { const c = document.querySelector('nav.tabs a[href="/boxes/trash"] .count'); return c && c.textContent.trim() !== before; }`,
		before, playwright.PageWaitForFunctionOptions{Timeout: playwright.Float(float64((15 * time.Second).Milliseconds()))}); err != nil {
		t.Fatalf("the Boxes page's Trash count stays %s after %s went to the trash: %v", before, e.demo.DuskyDune.Name, err)
	}
}

// following waits until the page's event stream is open.
func following(t *testing.T, page playwright.Page) {
	t.Helper()
	if err := page.Locator("body[data-following]").WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateAttached}); err != nil {
		t.Fatalf("the page does not follow its boxes (no event stream open): %v", err)
	}
}

// TestFollowKeepsTheFlash: a flash a list page shows once (the Machines
// tab's "Moving dusky-dune to the trash…") stays while the page follows
// the boxes: a take elsewhere draws the page's main again, its tabs'
// counts change, and the flash is still there, once.
func TestFollowKeepsTheFlash(t *testing.T) {
	br, err := Launch()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = br.Close() })
	e := setup(t, br, 1440)
	ctx := context.Background()
	e.gotoPage(t, "/boxes/dusky-dune/release")
	if err := e.page.Locator("button[type=submit].danger").First().Click(); err != nil {
		t.Fatal(err)
	}
	e.waitText(t, ".flash", "Moving dusky-dune to the trash")
	flash := e.text(t, ".flash")
	following(t, e.page)
	e.mark(t)
	count := func() string {
		s, err := e.page.Locator(`nav.tabs a[href="/boxes/snapshots"] .count`).TextContent()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(s)
	}
	before := count()
	if _, err := e.s.Take(ctx, snapshots.Owner(), e.demo.BriskLake.Name, "while the flash shows", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.page.WaitForFunction(`(before) => { const c = document.querySelector('nav.tabs a[href="/boxes/snapshots"] .count'); return c && c.textContent.trim() !== before; }`,
		before); err != nil {
		t.Fatalf("the Machines tab's Snapshots count stays %s after a take: the page does not follow: %v", before, err)
	}
	if n, err := e.page.Locator(".flash").Count(); err != nil || n != 1 {
		t.Fatalf("after the page followed a take, %d flashes show (%v), not the one it showed: %q", n, err, flash)
	}
	if got := e.text(t, ".flash"); got != flash {
		t.Errorf("after the page followed a take, the flash says %q, not %q", got, flash)
	}
	e.noReload(t)
}
