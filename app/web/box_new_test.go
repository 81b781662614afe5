package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/plans"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
)

// TestNewBoxAndRelease: the owner makes a box of a thread on the Machines
// tab, sees what a release takes with it, and releases it; a bad name is
// refused in words and makes nothing.
func TestNewBoxAndRelease(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{})
	ctx := context.Background()
	th, _, _ := s.env.Thread(t, "Fix the sign-in flow")

	page := s.do(t, "GET", "/boxes", nil, nil).Body.String()
	for _, want := range []string{"New box", `name="backend"`, "Fix the sign-in flow", "Your machine",
		"Adopting takes the guest over: boxsnap snapshots and restores it as one of its boxes, and releasing the box destroys the guest with its snapshots, except those kept."} {
		if !strings.Contains(page, want) {
			t.Fatalf("the Machines tab lacks %q", want)
		}
	}
	w := s.do(t, "POST", "/boxes", url.Values{"name": {"Bad Name"}, "backend": {"local"}, "kind": {"linux"}}, nil)
	if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "A box&#39;s name is 2 to 40 lowercase letters") {
		t.Fatalf("a bad name: %d %s", w.Code, w.Body.String())
	}
	w = s.do(t, "POST", "/boxes", url.Values{"name": {"calm-moss"}, "backend": {"local"}, "kind": {"linux"}, "thread": {th.ID}}, nil)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/boxes/calm-moss" {
		t.Fatalf("make a box: %d %s", w.Code, w.Header().Get("Location"))
	}
	b, err := s.env.Core.Box(ctx, snapshots.Owner(), "calm-moss")
	if err != nil || b.ThreadID == nil || *b.ThreadID != th.ID {
		t.Fatalf("the box %+v (%v)", b, err)
	}
	if boxes, _ := s.env.Boxes.List(ctx, snapshots.Owner()); len(boxes) != 1 {
		t.Fatalf("the bad name made a box: %d boxes", len(boxes))
	}
	op, _, err := s.env.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: "calm-moss"})
	if err != nil {
		t.Fatal(err)
	}
	s.env.Wait(t, op)

	page = s.do(t, "GET", "/boxes/calm-moss", nil, nil).Body.String()
	if !strings.Contains(page, `href="/boxes/calm-moss/release"`) {
		t.Fatal("the box's page has no Release…")
	}
	page = s.do(t, "GET", "/boxes/calm-moss/release", nil, nil).Body.String()
	if !strings.Contains(page, "Release calm-moss?") || !strings.Contains(page, "Its snapshot goes with it.") ||
		!strings.Contains(page, plans.ReleaseGoesWords("calm-moss", true)+" "+plans.ReleaseSnapshotsWords("calm-moss", 1, 0)) {
		t.Fatalf("the release page: %s", page)
	}
	// It is a dialog like the others, and offers to keep its snapshot first.
	if !strings.Contains(page, `<dialog class="dlg"`) || !strings.Contains(page, `<a href="/boxes/snapshots?q=calm-moss" id="keep-first">keep them first</a>`) {
		t.Fatalf("the release page is not a dialog offering Keep first: %s", page)
	}
	w = s.do(t, "POST", "/boxes/calm-moss/release", url.Values{}, nil)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/boxes" {
		t.Fatalf("release: %d %s", w.Code, w.Header().Get("Location"))
	}
	var opID string
	if err := s.env.Pool.QueryRow(ctx, "SELECT id FROM operations WHERE kind = 'release' AND box_id = $1", b.ID).Scan(&opID); err != nil {
		t.Fatalf("no release operation: %v", err)
	}
	if got := s.env.Wait(t, &snapshots.Operation{ID: opID}); got.State != snapshots.OpDone {
		t.Fatalf("release ended %s", got.State)
	}
	if b, err = s.env.Core.Box(ctx, snapshots.Owner(), "calm-moss"); err != nil || b.State != "trashed" {
		t.Fatalf("after its release the box is %+v (%v), want in the trash", b, err)
	}
	// The Trash tab lists it, with what it costs while it waits.
	page = s.do(t, "GET", "/boxes/trash", nil, nil).Body.String()
	if !strings.Contains(page, `href="/boxes/calm-moss/trash/empty"`) || !strings.Contains(page, "On this host its folder and its snapshots stay on disk") {
		t.Fatalf("the Trash tab: %s", page)
	}
	// Its Empty dialog says it goes now, in the words of an empty's dry run.
	page = s.do(t, "GET", "/boxes/calm-moss/trash/empty", nil, nil).Body.String()
	if !strings.Contains(page, plans.EmptyTrashGoesWords("calm-moss")+" Its 2 snapshots go with it.") {
		t.Fatalf("the Empty dialog: %s", page)
	}
	// Emptying it releases it; a released box cannot be released again.
	if w = s.do(t, "POST", "/boxes/calm-moss/trash/empty", url.Values{}, nil); w.Code != http.StatusSeeOther {
		t.Fatalf("empty: %d %s", w.Code, w.Body.String())
	}
	if err := s.env.Pool.QueryRow(ctx, "SELECT id FROM operations WHERE kind = 'release' AND box_id = $1 ORDER BY seq DESC LIMIT 1", b.ID).Scan(&opID); err != nil {
		t.Fatal(err)
	}
	if got := s.env.Wait(t, &snapshots.Operation{ID: opID}); got.State != snapshots.OpDone {
		t.Fatalf("emptying the trash ended %s", got.State)
	}
	w = s.do(t, "POST", "/boxes/calm-moss/release", url.Values{}, nil)
	if w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), "calm-moss is released already.") {
		t.Fatalf("second release: %d %s", w.Code, w.Body.String())
	}
}
