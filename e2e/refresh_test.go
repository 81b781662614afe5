package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// TestBrowserMenuStaysOpenWhileCardRefreshes opens a row's menu by keyboard
// on a card that refreshes itself every second (a restore waits at the
// box's stop), lets the card's polls come round, and finds the menu still open
// with the focus inside it: a refresh never closes what a person opened.
// When the menu closes, the card refreshes again.
func TestBrowserMenuStaysOpenWhileCardRefreshes(t *testing.T) {
	br, err := Launch()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = br.Close() })
	// hazel-heron's restore waits at its stop for minutes: its card
	// refreshes itself all that time.
	e := setupStack(t, br, 1440, false, StackOptions{StopTimeout: 10 * time.Minute})
	ctx := context.Background()
	slow, err := e.s.SlowBox(ctx, "hazel-heron")
	if err != nil {
		t.Fatal(err)
	}
	sn, err := e.s.Take(ctx, snapshots.Owner(), slow.Name, "before the upgrade", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: slow.Name, Snapshot: sn.ID}); err != nil {
		t.Fatal(err)
	}
	e.gotoPage(t, "/boxes/hazel-heron")
	if err := e.page.Locator("#box-live[hx-trigger^='every']").WaitFor(); err != nil {
		t.Fatalf("hazel-heron's card does not refresh itself while its restore waits: %v", err)
	}
	// Count the polls the card asks for, in the page.
	if _, err := e.page.Evaluate(`() => { window.__polls = 0; document.addEventListener("htmx:config:request", ev => { const src = ev.detail && ev.detail.ctx && ev.detail.ctx.sourceElement; if (src && src.id === "box-live") window.__polls++; }, true); }`); err != nil {
		t.Fatal(err)
	}
	e.tabTo(t, "#snapshots-card li.snap:not(.busy) details.menu summary")
	e.press(t, "Enter")
	if err := e.page.Locator("#snapshots-card details.menu[open]").WaitFor(); err != nil {
		t.Fatalf("Enter did not open the row's menu: %v", err)
	}
	e.press(t, "Tab")
	inside := e.focused(t)
	if _, err := e.page.WaitForFunction(`() => window.__polls >= 3`, nil); err != nil {
		t.Fatalf("the card did not come round to refresh: %v", err)
	}
	open, err := e.page.Locator("#snapshots-card details.menu[open]").Count()
	if err != nil {
		t.Fatal(err)
	}
	if open != 1 {
		t.Fatalf("the card's refresh closed the open menu (%d open)", open)
	}
	if f := e.focused(t); f != inside {
		t.Fatalf("the card's refresh moved the focus from %q to %q", inside, f)
	}
	// Closed, the card refreshes again.
	e.press(t, "Escape")
	if err := e.page.Locator("#snapshots-card details.menu[open]").WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateDetached}); err != nil {
		t.Fatalf("Escape did not close the menu: %v", err)
	}
	if _, err := e.page.Evaluate(`() => { window.__swaps = 0; document.addEventListener("htmx:after:swap", () => window.__swaps++); }`); err != nil {
		t.Fatal(err)
	}
	if _, err := e.page.WaitForFunction(`() => window.__swaps >= 2`, nil); err != nil {
		t.Fatalf("the card stopped refreshing after the menu closed: %v", err)
	}
}
