package e2e

import (
	"testing"

	"github.com/mxschmitt/playwright-go"
)

// TestDialogsDoNotScroll: opening a dialog leaves the page behind it where
// it was, on the desktop and on a phone: the dialog's first field takes
// the focus without scrolling the page to it.
func TestDialogsDoNotScroll(t *testing.T) {
	t.Parallel()
	br := launch(t)
	for _, width := range []int{1440, 390} {
		e := setup(t, br, width)
		mig := e.demo.Migration.ID
		opens := []struct {
			name  string
			menu  bool
			click string
		}{
			{"Take snapshot", false, "#take-btn"},
			{"Restore", false, "#restore-" + mig},
			{"Rename", true, "Rename…"},
			{"Note", true, "Note…"},
			{"Keep", true, "Keep…"},
			{"Fork", true, "Fork…"},
			{"Delete", true, "Delete…"},
		}
		for _, o := range opens {
			if width == 1440 && o.name == "Fork" {
				o.menu, o.click = false, "#fork-"+mig
			}
			e.gotoPage(t, "/boxes/amber-fox")
			e.settled(t)
			// Start part way down, as a person who scrolled to the row.
			if _, err := e.page.Evaluate(`() => window.scrollTo(0, 60)`); err != nil {
				t.Fatal(err)
			}
			var before float64
			if o.menu {
				if err := e.page.Locator("#menu-" + mig).Click(); err != nil {
					t.Fatal(err)
				}
				item := e.page.Locator("#snap-"+mig+" .items a.item", playwright.PageLocatorOptions{HasText: o.click}).First()
				before = e.reach(t, item)
				if err := item.Click(); err != nil {
					t.Fatalf("%s at %d px: %v", o.name, width, err)
				}
			} else {
				btn := e.page.Locator(o.click)
				before = e.reach(t, btn)
				if err := btn.Click(); err != nil {
					t.Fatalf("%s at %d px: %v", o.name, width, err)
				}
			}
			e.shown(t)
			// htmx focuses the autofocus field again once the swap settles.
			if err := e.page.Locator("#dialog-host dialog:not(.htmx-added)").WaitFor(); err != nil {
				t.Fatal(err)
			}
			if _, err := e.page.Evaluate(`() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))`); err != nil {
				t.Fatal(err)
			}
			if after := e.scrollY(t); after != before {
				t.Errorf("opening %s at %d px scrolled the page from %v to %v", o.name, width, before, after)
			}
		}
	}
}

// reach scrolls loc into view, as a click does first, and says where the
// page is then.
func (e *env) reach(t *testing.T, loc playwright.Locator) float64 {
	t.Helper()
	if err := loc.ScrollIntoViewIfNeeded(); err != nil {
		t.Fatal(err)
	}
	return e.scrollY(t)
}

func (e *env) scrollY(t *testing.T) float64 {
	t.Helper()
	v, err := e.page.Evaluate(`() => window.scrollY`)
	if err != nil {
		t.Fatal(err)
	}
	switch n := v.(type) {
	case int:
		return float64(n)
	case float64:
		return n
	}
	t.Fatalf("scrollY is %T %v", v, v)
	return 0
}
