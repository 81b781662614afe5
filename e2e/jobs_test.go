package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mxschmitt/playwright-go"
)

// TestJobsBackLinkInChromium opens River's job dashboard, mounted at /jobs
// as serve mounts it, at 1440 and 390 px: boxsnap's way back sits over
// none of River's logo, the top of its sidebar or anything of River's one
// can press (its list's Fewer and More buttons at the bottom of the window
// among them), and it leads back to boxsnap. At 390 px River hides its
// sidebar behind a button, which the test opens too. Its screenshots are
// the test's artifacts (go test -artifacts -outputdir DIR keeps them).
func TestJobsBackLinkInChromium(t *testing.T) {
	br, err := Launch()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = br.Close() })
	for _, width := range []int{1440, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			shots := t.ArtifactDir()
			e := setupStack(t, br, width, false, StackOptions{JobsUI: true})
			e.gotoPage(t, "/jobs/")
			back := e.page.Locator(`body > a[href="/boxes"]`)
			if err := back.WaitFor(); err != nil {
				t.Fatalf("River's dashboard has no way back to boxsnap: %v", err)
			}
			if width >= 1024 {
				logo := e.page.Locator(`svg[aria-label="River logo"]`).Locator("visible=true")
				if err := logo.WaitFor(); err != nil {
					t.Fatalf("River's logo is not shown: %v", err)
				}
				e.notUnder(t, back, logo, "River's logo")
				e.notUnder(t, back, e.page.GetByText("Job State").Locator("visible=true"), "the top of River's sidebar")
			} else {
				// River shows no logo on a narrow window, and its sidebar
				// is behind its button, at the top of the page: the way
				// back is a line above River's header, in the page's flow.
				open := e.page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Open sidebar"})
				if err := open.WaitFor(); err != nil {
					t.Fatalf("River's “Open sidebar” button is not shown: %v", err)
				}
				e.shoot(t, filepath.Join(shots, fmt.Sprintf("jobs-%d.png", width)))
				e.notUnder(t, back, open, "River's “Open sidebar” button")
				if err := open.Click(); err != nil {
					t.Fatal(err)
				}
				top := e.page.Locator(`[role="dialog"] ul a[href^="/jobs"]`).Locator("visible=true")
				if err := top.First().WaitFor(); err != nil {
					t.Fatalf("River's sidebar did not open: %v", err)
				}
				// Opened, the sidebar is River's dialog, over the whole
				// window and the way back with it.
				e.notCovered(t, back, top)
			}
			// Nothing of River's one can press is under the way back:
			// where their boxes meet, River's is the one on top.
			e.notCovered(t, back, e.page.Locator(`a[href^="/jobs"], button`).Locator("visible=true"))
			e.shoot(t, filepath.Join(shots, fmt.Sprintf("jobs-%d%s.png", width, map[bool]string{true: "", false: "-sidebar"}[width >= 1024])))
			if width < 1024 {
				if err := e.page.Keyboard().Press("Escape"); err != nil {
					t.Fatal(err)
				}
				if err := e.page.Locator(`[role="dialog"]`).WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateDetached}); err != nil {
					t.Fatal(err)
				}
			}
			// River's list of jobs keeps its Fewer and More buttons at the
			// bottom of the window: the way back covers neither.
			e.gotoPage(t, "/jobs/jobs?state=completed")
			more := e.page.Locator(`nav[aria-label="Pagination"] button`).Filter(playwright.LocatorFilterOptions{HasText: "More"})
			if err := more.WaitFor(); err != nil {
				t.Fatalf("River's list of completed jobs shows no More button: %v", err)
			}
			e.notCovered(t, back, e.page.Locator(`a[href^="/jobs"], button`).Locator("visible=true"))
			e.shoot(t, filepath.Join(shots, fmt.Sprintf("jobs-%d-completed.png", width)))
			if err := back.Click(); err != nil {
				t.Fatal(err)
			}
			if err := e.page.WaitForURL("**/boxes"); err != nil {
				t.Fatalf("the way back leads to %s: %v", e.page.URL(), err)
			}
			if title, _ := e.page.Title(); !strings.Contains(title, "boxsnap") {
				t.Errorf("the way back leads to a page titled %q", title)
			}
		})
	}
}

// notUnder fails when the fixed link's box meets the box of any element of
// what, which must match one at least.
func (e *env) notUnder(t *testing.T, link, what playwright.Locator, name string) {
	t.Helper()
	lb, err := link.BoundingBox()
	if err != nil || lb == nil {
		t.Fatalf("the way back has no box: %v", err)
	}
	all, err := what.All()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 {
		t.Fatalf("%s is not on the page", name)
	}
	for _, el := range all {
		b, err := el.BoundingBox()
		if err != nil || b == nil {
			continue
		}
		if lb.X < b.X+b.Width && b.X < lb.X+lb.Width && lb.Y < b.Y+b.Height && b.Y < lb.Y+lb.Height {
			text, _ := el.TextContent()
			t.Errorf("the way back (%+v) covers %s %q (%+v)", *lb, name, strings.TrimSpace(text), *b)
		}
	}
}

// notCovered fails where the fixed link is on top of an element of what:
// at the middle of where their boxes meet, the page's topmost element is
// the link.
func (e *env) notCovered(t *testing.T, link, what playwright.Locator) {
	t.Helper()
	lb, err := link.BoundingBox()
	if err != nil || lb == nil {
		t.Fatalf("the way back has no box: %v", err)
	}
	all, err := what.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, el := range all {
		b, err := el.BoundingBox()
		if err != nil || b == nil {
			continue
		}
		x0, y0 := max(lb.X, b.X), max(lb.Y, b.Y)
		x1, y1 := min(lb.X+lb.Width, b.X+b.Width), min(lb.Y+lb.Height, b.Y+b.Height)
		if x0 >= x1 || y0 >= y1 {
			continue
		}
		onTop, err := link.Evaluate(`(a, p) => { const t = document.elementFromPoint(p.x, p.y); return !!t && a.contains(t) }`,
			map[string]any{"x": (x0 + x1) / 2, "y": (y0 + y1) / 2})
		if err != nil {
			t.Fatal(err)
		}
		if onTop == true {
			text, _ := el.TextContent()
			t.Errorf("the way back (%+v) covers River's %q (%+v)", *lb, strings.TrimSpace(text), *b)
		}
	}
}

// shoot saves a screenshot of the page to path.
func (e *env) shoot(t *testing.T, path string) {
	t.Helper()
	if _, err := e.page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(path)}); err != nil {
		t.Fatal(err)
	}
}
