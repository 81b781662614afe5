package api_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestListPagesInTheDatabase: GET /snapshots answers a page of boxes at a
// time with next, the path of the page after, until the last; the pages
// hold every box with snapshots once, live ones first and by name, each
// with every snapshot; kept=true keeps to kept ones on every page; a place
// the listing never gave and a limit out of range are refused.
func TestListPagesInTheDatabase(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO boxes (id, name, kind, backend_id, guest_ref, state) SELECT 'bx' || lpad(i::text, 12, '0'), 'box-' || lpad(i::text, 2, '0'), 'linux', 'local', 'g' || i,
		   CASE WHEN i % 4 = 0 THEN 'released' ELSE 'ready' END FROM generate_series(1, 11) i`,
		`INSERT INTO snapshots (id, box_id, box_name, box_kind, backend_id, name, taken_at, by_kind, owner_kind, state, kept_until)
		 SELECT 'sn' || lpad(i::text, 12, '0'), 'bx' || lpad((i % 11 + 1)::text, 12, '0'), 'b', 'linux', 'local', 'snapshot ' || i,
		        now() - (i || ' minutes')::interval, 'owner', 'person', 'ready', CASE WHEN i % 5 = 0 THEN now() + interval '9 days' END
		 FROM generate_series(1, 50) i`,
	} {
		if _, err := e.Pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	walk := func(path string) (boxes []string, snaps, pages int) {
		t.Helper()
		for path != "" {
			a := e.call(t, "GET", path, e.owner, nil).must(t, 200)
			pages++
			for _, x := range a.JSON["boxes"].([]any) {
				b := x.(map[string]any)
				box := b["box"].(map[string]any)
				boxes = append(boxes, fmt.Sprintf("%s %s", box["state"], box["name"]))
				snaps += len(b["snapshots"].([]any))
			}
			path, _ = a.JSON["next"].(string)
			if pages > 20 {
				t.Fatal("the pages do not end")
			}
		}
		return boxes, snaps, pages
	}
	var want []string
	for i := 1; i <= 11; i++ {
		if i%4 != 0 {
			want = append(want, fmt.Sprintf("ready box-%02d", i))
		}
	}
	for i := 4; i <= 11; i += 4 {
		want = append(want, fmt.Sprintf("released box-%02d", i))
	}
	boxes, snaps, pages := walk("/snapshots?limit=3")
	if !slices.Equal(boxes, want) || snaps != 50 || pages != 4 {
		t.Errorf("3 boxes a page: %d pages, %d snapshots, boxes %q; want 4 pages, 50 snapshots, %q", pages, snaps, boxes, want)
	}
	if boxes, snaps, pages := walk("/snapshots"); !slices.Equal(boxes, want) || snaps != 50 || pages != 1 {
		t.Errorf("one page: %d pages, %d snapshots, boxes %q", pages, snaps, boxes)
	}
	if _, snaps, _ := walk("/snapshots?kept=true&limit=2"); snaps != 10 {
		t.Errorf("kept ones, 2 boxes a page: %d snapshots, want 10", snaps)
	}
	for _, c := range []struct{ path, words string }{
		{"/snapshots?after=bm90IGEgcGxhY2U", "after is not a place this listing gave; start again from the first page."},
		{"/snapshots?limit=0", "limit is a number of boxes from 1 to 500."},
		{"/snapshots?limit=501", "limit is a number of boxes from 1 to 500."},
	} {
		a := e.call(t, "GET", c.path, e.owner, nil).must(t, 400)
		if !strings.Contains(a.errorWords(), c.words) {
			t.Errorf("%s: %q, want %q", c.path, a.errorWords(), c.words)
		}
	}
}
