package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestCLIListReadsEveryPage: `list` prints every box of a listing
// the API answers a page of 50 boxes at a time, in its order, and --json
// gives them as one document.
func TestCLIListReadsEveryPage(t *testing.T) {
	t.Parallel()
	g := setup(t)
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO boxes (id, name, kind, backend_id, guest_ref) SELECT 'bx' || lpad(i::text, 12, '0'), 'box-' || lpad(i::text, 3, '0'), 'linux', 'local', 'g' || i
		 FROM generate_series(1, 120) i`,
		`INSERT INTO snapshots (id, box_id, box_name, box_kind, backend_id, name, by_kind, owner_kind, state)
		 SELECT 'sn' || lpad(i::text, 12, '0'), 'bx' || lpad((i % 120 + 1)::text, 12, '0'), 'b', 'linux', 'local', 'snapshot ' || i, 'owner', 'person', 'ready'
		 FROM generate_series(1, 240) i`,
	} {
		if _, err := g.Pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	out := g.ok(t, "list")
	last := -1
	for i := 1; i <= 120; i++ {
		head := fmt.Sprintf("box-%03d: ", i)
		at := strings.Index(out, head)
		if at < 0 || at < last {
			t.Fatalf("the list does not print %s after the box before it:\n%.2000s", head, out)
		}
		last = at
	}
	if n := strings.Count(out, "snapshot "); n != 240 {
		t.Errorf("the list prints %d snapshots, want 240", n)
	}
	var doc struct {
		Boxes []json.RawMessage `json:"boxes"`
	}
	if err := json.Unmarshal([]byte(g.ok(t, "list", "--json")), &doc); err != nil || len(doc.Boxes) != 120 {
		t.Errorf("--json: %v, %d boxes, want 120", err, len(doc.Boxes))
	}
}
