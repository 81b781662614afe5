package web

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// benchSite is the web app over boxes and snapshots made straight in the
// database by generate_series, a statement per table (section 12's
// Snapshots tab at scale): one thread per 20 boxes, half the boxes a
// thread's; every 7th snapshot has a note, every 3rd an agent took, every
// 11th is kept for 20 days, every 13th kept for 3 (it goes within 7).
func benchSite(b *testing.B, boxes, snaps int) *site {
	b.Helper()
	s := newSite(b, coretest.Options{NoWorkers: true})
	ctx := context.Background()
	threads := boxes / 20
	stmts := []string{
		fmt.Sprintf(`INSERT INTO threads (id, title, token_hash) SELECT 'th' || lpad(i::text, 12, '0'), 'Thread ' || i, decode(md5(i::text), 'hex')
		 FROM generate_series(1, %d) i`, threads),
		fmt.Sprintf(`INSERT INTO boxes (id, name, kind, thread_id, backend_id, host, guest_ref)
		 SELECT 'bx' || lpad(i::text, 12, '0'), 'box-' || lpad(i::text, 5, '0'), 'linux',
		        CASE WHEN i %% 2 = 0 THEN 'th' || lpad((i %% %[2]d + 1)::text, 12, '0') END, 'local', 'vm', 'bx' || lpad(i::text, 12, '0')
		 FROM generate_series(1, %[1]d) i`, boxes, threads),
		fmt.Sprintf(`INSERT INTO snapshots (id, box_id, box_name, box_kind, backend_id, host, name, note, taken_at, by_kind, by_thread_id,
		        size_bytes, size_meaning, owner_kind, state, fork_safe, kept_until)
		 SELECT 'sn' || lpad(i::text, 12, '0'), 'bx' || lpad((i %% %[2]d + 1)::text, 12, '0'), 'box-' || lpad((i %% %[2]d + 1)::text, 5, '0'),
		        'linux', 'local', 'vm', 'snapshot ' || i, CASE WHEN i %% 7 = 0 THEN 'before the migration' END,
		        now() - (i || ' minutes')::interval, CASE WHEN i %% 3 = 0 THEN 'agent' ELSE 'owner' END,
		        CASE WHEN i %% 3 = 0 THEN 'th' || lpad(((i %% %[2]d + 1) %% %[3]d + 1)::text, 12, '0') END,
		        (i::bigint * 1000003) %% 4000000000, 'own', 'person', 'ready', 1,
		        CASE WHEN i %% 11 = 0 THEN now() + interval '20 days' WHEN i %% 13 = 0 THEN now() + interval '3 days' END
		 FROM generate_series(1, %[1]d) i`, snaps, boxes, threads),
		`VACUUM (ANALYZE) threads, boxes, snapshots`,
	}
	for _, q := range stmts {
		if _, err := s.env.Pool.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

func benchPage(b *testing.B, s *site, target string, header map[string]string) string {
	b.Helper()
	var body string
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w := s.do(b, "GET", target, nil, header)
		if w.Code != http.StatusOK {
			b.Fatalf("%s answered %d", target, w.Code)
		}
		body = w.Body.String()
	}
	b.ReportMetric(float64(len(body)), "html-bytes")
	return body
}

var moreLink = regexp.MustCompile(`<div id="([^"]+)" class="more" hx-get="([^"]+)"`)

// BenchmarkSnapshotsTab measures the Snapshots tab at 100,000 snapshots on
// 10,000 boxes (issue 10's size; -short: 5,000 on 1,000): the first view
// (the page renders into a buffer, so its time is the time to the last
// byte), a search and a filter answered as the results fragment, and the
// next boxes as the owner scrolls, by the first view's own "more" link.
func BenchmarkSnapshotsTab(b *testing.B) {
	boxes, snaps := 10000, 100000
	if testing.Short() {
		boxes, snaps = 1000, 5000
	}
	s := benchSite(b, boxes, snaps)
	frag := map[string]string{"HX-Request": "true", "HX-Target": "div#snapshot-results"}
	var first string
	b.Run("FirstView", func(b *testing.B) { first = benchPage(b, s, "/boxes/snapshots", nil) })
	b.Run("Search", func(b *testing.B) { benchPage(b, s, "/boxes/snapshots?q=box-04200", frag) })
	b.Run("FilterAgentsKept", func(b *testing.B) { benchPage(b, s, "/boxes/snapshots?by=agents&kept=1", frag) })
	b.Run("LoadMore", func(b *testing.B) {
		m := moreLink.FindStringSubmatch(first)
		if m == nil {
			b.Fatal("the first view has no more link")
		}
		benchPage(b, s, html.UnescapeString(m[2]), map[string]string{"HX-Request": "true", "HX-Target": "div#" + m[1]})
	})
}

// BenchmarkCoreList is the core's List of every snapshot (the API's
// listing of one box reads this way), at 5,000 snapshots on 1,000 boxes.
func BenchmarkCoreList(b *testing.B) {
	s := benchSite(b, 1000, 5000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.env.Core.List(context.Background(), snapshots.Owner(), snapshots.ListQuery{}); err != nil {
			b.Fatal(err)
		}
	}
}
