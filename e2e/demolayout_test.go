package e2e

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"
)

// TestLayoutOfTheDemo lays out make run's demo as the built binary serves
// it (its local boxes and the Proxmox simulator's guests) at each width,
// with the layout test's checks and axe: TestLayoutEveryState's stack holds local
// boxes only, and rows only the demo draws (the simulator's backends,
// hosts and boxes) went past a phone's window with no test failing.
func TestLayoutOfTheDemo(t *testing.T) {
	axeJS := axeScript(t)
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
			checkLayout(t, page, what)
			checkAxe(t, page, what, axeJS)
		}
		_ = bctx.Close()
	}
}
