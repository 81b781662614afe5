package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// env is one browser test's boxsnap, demo data and signed-in page.
type env struct {
	s    *Stack
	demo *Demo
	page playwright.Page
}

func setup(t *testing.T, br *Browser, width int) *env {
	return setupWith(t, br, width, false)
}

func setupWith(t *testing.T, br *Browser, width int, bypassCSP bool) *env {
	t.Helper()
	return setupStack(t, br, width, bypassCSP, StackOptions{})
}

// setupStack is setupWith on a stack made with opts; its LocalRoot is the
// test's own.
func setupStack(t *testing.T, br *Browser, width int, bypassCSP bool, opts StackOptions) *env {
	t.Helper()
	ctx := context.Background()
	pool := dbtest.New(t)
	opts.LocalRoot = filepath.Join(t.TempDir(), "local")
	s, err := Start(ctx, pool, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		_ = s.Close(cctx)
	})
	demo, err := s.Seed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bctx, page, err := br.PageWith(s.URL, width, 900, false, bypassCSP)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bctx.Close() })
	page.SetDefaultTimeout(15000)
	return &env{s: s, demo: demo, page: page}
}

// tabTo presses Tab until the focused element matches sel: the control is
// reached by keyboard alone, in the page's order.
func (e *env) tabTo(t *testing.T, sel string) {
	t.Helper()
	var seen []string
	for i := 0; i < 250; i++ {
		if i > 230 {
			seen = append(seen, e.focused(t))
		}
		ok, err := e.page.Evaluate(`s => !!document.activeElement && document.activeElement.matches(s)`, sel)
		if err != nil {
			t.Fatal(err)
		}
		if ok == true {
			return
		}
		if err := e.page.Keyboard().Press("Tab"); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatalf("Tab never reached %s; it went through %q", sel, seen)
}

func (e *env) press(t *testing.T, key string) {
	t.Helper()
	if err := e.page.Keyboard().Press(key); err != nil {
		t.Fatal(err)
	}
}

func (e *env) typeText(t *testing.T, text string) {
	t.Helper()
	if err := e.page.Keyboard().Type(text); err != nil {
		t.Fatal(err)
	}
}

func (e *env) gotoPage(t *testing.T, path string) {
	t.Helper()
	if _, err := e.page.Goto(e.s.URL + path); err != nil {
		t.Fatal(err)
	}
}

// focused describes the focused element: its tag, id, text and name.
func (e *env) focused(t *testing.T) string {
	t.Helper()
	v, err := e.page.Evaluate(`() => { const a = document.activeElement; return a ? a.tagName + "#" + a.id + " " + (a.getAttribute("aria-label") || a.textContent.trim()) : "" }`)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(v)
}

// waitText waits until sel's text contains want.
func (e *env) waitText(t *testing.T, sel, want string) {
	t.Helper()
	loc := e.page.Locator(sel).Filter(playwright.LocatorFilterOptions{HasText: want})
	if err := loc.First().WaitFor(); err != nil {
		body, _ := e.page.Locator("main").InnerText()
		t.Fatalf("no %s saying %q: %v\npage says:\n%s", sel, want, err, body)
	}
}

// settled waits until nothing on the page refreshes itself any more (the
// cards poll every second while an operation runs), so what a test reads
// and tabs through is the page's last state, not one a poll replaces.
func (e *env) settled(t *testing.T) {
	t.Helper()
	if err := e.page.Locator("[hx-trigger^='every']").First().WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateDetached}); err != nil {
		t.Fatalf("the page still refreshes itself: %v", err)
	}
}

// shown waits until boxsnap.js has opened the dialog htmx brought as a
// modal: before that, Escape would reach a dialog that is not yet modal.
func (e *env) shown(t *testing.T) {
	t.Helper()
	if err := e.page.Locator("#dialog-host dialog[data-shown]").WaitFor(); err != nil {
		t.Fatalf("the dialog was not opened as a modal: %v", err)
	}
}

// closed waits until boxsnap.js has closed the dialog and handled its
// close: it empties the dialog's host and puts the focus back in the same
// step, and the close event comes a task after Escape, so a test that reads
// the focus at once can read it before.
func (e *env) closed(t *testing.T) {
	t.Helper()
	if err := e.page.Locator("#dialog-host dialog").WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateDetached}); err != nil {
		t.Fatalf("the dialog did not close: %v", err)
	}
}

func (e *env) text(t *testing.T, sel string) string {
	t.Helper()
	s, err := e.page.Locator(sel).First().InnerText()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// rowID finds the ID of the row named name.
func (e *env) rowID(t *testing.T, name string) string {
	t.Helper()
	loc := e.page.Locator("li.snap").Filter(playwright.LocatorFilterOptions{Has: e.page.Locator(".name", playwright.PageLocatorOptions{HasText: name})})
	id, err := loc.First().GetAttribute("id")
	if err != nil {
		t.Fatalf("no row %q: %v", name, err)
	}
	return strings.TrimPrefix(id, "snap-")
}

// mark sets a marker on the window; noReload checks it is still there, so
// what changed came without a reload.
func (e *env) mark(t *testing.T) {
	t.Helper()
	if _, err := e.page.Evaluate(`() => { window.__boxsnapMark = 1 }`); err != nil {
		t.Fatal(err)
	}
}

func (e *env) noReload(t *testing.T) {
	t.Helper()
	v, err := e.page.Evaluate(`() => window.__boxsnapMark === 1`)
	if err != nil || v != true {
		t.Fatal("the page reloaded: live progress must come without one")
	}
}

// axe runs axe-core on the page and fails on any serious or critical
// violation.
func (e *env) axe(t *testing.T, what string) {
	t.Helper()
	checkAxe(t, e.page, what, axeScript(t))
}

func snapshotNamed(t *testing.T, s *Stack, box, name string) *snapshots.Snapshot {
	t.Helper()
	list, err := s.Core.List(context.Background(), snapshots.Owner(), snapshots.ListQuery{Box: box})
	if err != nil {
		t.Fatal(err)
	}
	for _, sn := range list[0].Snapshots {
		if sn.Name == name {
			return sn
		}
	}
	t.Fatalf("no snapshot %q on %s", name, box)
	return nil
}
