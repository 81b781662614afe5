package web

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
)

// TestForkDialogBoxes: the Fork dialog offers Boxes, 1 to the setting; a
// count out of range is refused in words and makes nothing; Fork with
// Boxes 3 makes name-1 … name-3 from the one snapshot and opens the
// Machines tab.
func TestForkDialogBoxes(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{})
	ctx := context.Background()
	b := s.env.Box(t, snapshots.Owner(), "amber-fox")
	op, sn, err := s.env.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: b.Name, Name: "before the migration"})
	if err != nil {
		t.Fatal(err)
	}
	s.env.Wait(t, op)
	path := "/boxes/amber-fox/snapshots/" + sn.ID + "/fork"
	body := html.UnescapeString(s.do(t, "GET", path, nil, nil).Body.String())
	for _, want := range []string{`<label for="dlg-count">Boxes</label>`, `name="count" type="number" min="1" max="10" value="1"`,
		"1 to 10, all from this snapshot, each its own box"} {
		if !strings.Contains(body, want) {
			t.Fatalf("the fork dialog does not say %q:\n%s", want, body)
		}
	}
	plan, req := planField.FindStringSubmatch(body), requestField.FindStringSubmatch(body)
	w := s.do(t, "POST", path, url.Values{"plan": {plan[1]}, "request": {req[1]}, "name": {"try"}, "count": {"11"}, "back": {"/boxes/amber-fox"}}, nil)
	if w.Code != http.StatusBadRequest || !strings.Contains(html.UnescapeString(w.Body.String()), "Boxes is a whole number from 1 to 10.") {
		t.Fatalf("Boxes 11 answered %d:\n%s", w.Code, w.Body)
	}
	w = s.do(t, "POST", path, url.Values{"plan": {plan[1]}, "request": {req[1]}, "name": {"try"}, "count": {"3"}, "back": {"/boxes/amber-fox"}}, nil)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/boxes" {
		t.Fatalf("Fork with Boxes 3 answered %d %q:\n%s", w.Code, w.Header().Get("Location"), w.Body)
	}
	rows, err := s.env.Pool.Query(ctx, `SELECT id FROM operations WHERE kind = 'fork'`)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if len(ids) != 3 {
		t.Fatalf("%d fork operations for Boxes 3", len(ids))
	}
	for _, id := range ids {
		fop, err := s.env.Core.Operation(ctx, snapshots.Owner(), id)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.env.Wait(t, fop); got.State != snapshots.OpDone {
			t.Fatalf("a fork ended %s", got.State)
		}
	}
	for _, name := range []string{"try-1", "try-2", "try-3"} {
		f, err := s.env.Core.Box(ctx, snapshots.Owner(), name)
		if err != nil || f.HeadID == nil || *f.HeadID != sn.ID {
			t.Fatalf("%s: %+v %v", name, f, err)
		}
	}
}
