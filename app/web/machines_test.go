package web

import (
	"context"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
)

var (
	machineCard = regexp.MustCompile(`<h2><a href="/boxes/([^"]+)">`)
	machineMore = regexp.MustCompile(`<li id="([^"]+)" class="more" hx-get="([^"]+)"`)
)

// TestMachinesTabPages: the Machines tab sends its boxes a page at a time,
// by name, each with its count, and its "load more" brings the next page
// until every live box has come once; released boxes come under Released.
func TestMachinesTabPages(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{NoWorkers: true})
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO boxes (id, name, kind, backend_id, host, guest_ref, state, released_at)
		 SELECT 'bx' || lpad(i::text, 12, '0'), 'box-' || lpad(i::text, 5, '0'), 'linux', 'local', '', 'g' || i,
		        CASE WHEN i > 120 THEN 'released' ELSE 'ready' END, CASE WHEN i > 120 THEN now() END
		 FROM generate_series(1, 123) i`,
		`INSERT INTO snapshots (id, box_id, box_name, box_kind, backend_id, name, by_kind, owner_kind, state, kept_until)
		 SELECT 'sn' || lpad(i::text, 12, '0'), 'bx000000000007', 'box-00007', 'linux', 'local', 'snapshot ' || i, 'owner', 'person', 'ready',
		        CASE WHEN i = 1 THEN now() + interval '3 days' END
		 FROM generate_series(1, 3) i`,
	} {
		if _, err := s.env.Pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	body := s.do(t, "GET", "/boxes", nil, nil).Body.String()
	live, released, _ := strings.Cut(body, "<h2>Released</h2>")
	if !strings.Contains(body, `box-00007</a></h2>`) || !strings.Contains(body, "3 snapshots: 1 kept") {
		t.Errorf("the Machines tab does not say box-00007's 3 snapshots: 1 kept")
	}
	if n := len(machineCard.FindAllString(released, -1)); n != 3 {
		t.Errorf("Released lists %d boxes, want 3", n)
	}
	var names []string
	for pages := 1; ; pages++ {
		for _, m := range machineCard.FindAllStringSubmatch(live, -1) {
			names = append(names, m[1])
		}
		more := machineMore.FindStringSubmatch(live)
		if more == nil {
			if pages != 3 {
				t.Errorf("the live boxes came in %d pages, want 3 of at most %d", pages, machinesPerPage)
			}
			break
		}
		if pages > 5 {
			t.Fatal("the Machines tab's more links do not end")
		}
		live = s.do(t, "GET", html.UnescapeString(more[2]), nil, map[string]string{"HX-Request": "true", "HX-Target": "li#" + more[1]}).Body.String()
		if strings.Contains(live, "<html") {
			t.Fatal("load more answered the whole page")
		}
	}
	if len(names) != 120 || names[0] != "box-00001" || names[119] != "box-00120" {
		t.Errorf("the live boxes came as %d: %v…", len(names), names[:min(3, len(names))])
	}
	for i := 1; i < len(names); i++ {
		if names[i] <= names[i-1] {
			t.Fatalf("%s came after %s", names[i], names[i-1])
		}
	}
}
