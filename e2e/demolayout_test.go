package e2e

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mxschmitt/playwright-go"
)

// TestLayoutOfTheDemo lays out make run's demo as the built binary serves
// it (its local boxes and the Proxmox simulator's guests) at each width,
// with the layout test's checks and axe: TestLayoutEveryState's stack holds local
// boxes only, and rows only the demo draws (the simulator's backends,
// hosts and boxes) went past a phone's window with no test failing.
func TestLayoutOfTheDemo(t *testing.T) {
	dir := os.Getenv("BOXSNAP_AXE_DIR")
	if dir == "" {
		t.Fatal("BOXSNAP_AXE_DIR is not set: run `make browser-deps` (make test sets it)")
	}
	axeJS := filepath.Join(dir, "axe.min.js")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	h := newBinHosts(t)
	_, base := h.start("demo", []string{"BOXSNAP_DEMO=true"}, "serve")
	tok, err := personToken(ctx, base, Password)
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Boxes []struct {
			Name string `json:"name"`
		} `json:"boxes"`
	}
	if err := newSoakHTTP(base, tok).do(ctx, "GET", "/api/v1/boxes", nil, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Boxes) < 4 {
		t.Fatalf("the demo seeded %d boxes: %+v", len(list.Boxes), list.Boxes)
	}
	paths := []string{"/boxes", "/boxes/snapshots", "/boxes/threads", "/settings/snapshots", "/settings/snapshots/backends", "/settings/hosts", "/settings/templates", "/boxes/trash", "/approvals", "/import"}
	for _, b := range list.Boxes {
		paths = append(paths, "/boxes/"+url.PathEscape(b.Name))
	}
	br, err := Launch()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = br.Close() })
	for _, w := range layoutWidths {
		bctx, page, err := br.PageWith(base, w, 900, false, true) // axe needs its script past the CSP
		if err != nil {
			t.Fatal(err)
		}
		page.SetDefaultTimeout(15000)
		for _, p := range paths {
			what := fmt.Sprintf("%s at %d px", p, w)
			resp, err := page.Goto(base + p)
			if err != nil {
				t.Errorf("%s: %v", what, err)
				continue
			}
			if resp.Status() != 200 {
				t.Errorf("%s: HTTP %d", what, resp.Status())
				continue
			}
			res, err := page.Evaluate(layoutChecks)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if found, _ := res.([]any); len(found) > 0 {
				t.Errorf("%s:\n%s", what, lines(found))
			}
			if _, err := page.AddScriptTag(playwright.PageAddScriptTagOptions{Path: playwright.String(axeJS)}); err != nil {
				t.Fatalf("%s: inject axe: %v", what, err)
			}
			if res, err = page.Evaluate(axeRun); err != nil {
				t.Fatalf("axe on %s: %v", what, err)
			}
			if found, _ := res.([]any); len(found) > 0 {
				t.Errorf("axe on %s:\n%s", what, lines(found))
			}
		}
		_ = bctx.Close()
	}
}
