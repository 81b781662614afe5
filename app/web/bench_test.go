package web

import (
	"context"
	"net/http"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// benchSite is the web app over 1,000 boxes and 5,000 snapshots, inserted
// straight into the database (section 12's Snapshots tab at scale).
func benchSite(b *testing.B) *site {
	b.Helper()
	s := newSite(b, coretest.Options{NoWorkers: true})
	ctx := context.Background()
	stmts := []string{
		`INSERT INTO threads (id, title, token_hash) SELECT 'th' || lpad(i::text, 12, '0'), 'Thread ' || i, decode(md5(i::text), 'hex')
		 FROM generate_series(1, 50) i`,
		`INSERT INTO boxes (id, name, kind, thread_id, backend_id, host, guest_ref)
		 SELECT 'bx' || lpad(i::text, 12, '0'), 'box-' || lpad(i::text, 4, '0'), 'linux',
		        CASE WHEN i % 2 = 0 THEN 'th' || lpad((i % 50 + 1)::text, 12, '0') END, 'local', 'vm', 'bx' || lpad(i::text, 12, '0')
		 FROM generate_series(1, 1000) i`,
		`INSERT INTO snapshots (id, box_id, box_name, box_kind, backend_id, host, name, note, taken_at, by_kind, by_thread_id,
		        size_bytes, size_meaning, owner_kind, state, fork_safe, kept_until)
		 SELECT 'sn' || lpad(i::text, 12, '0'), 'bx' || lpad((i % 1000 + 1)::text, 12, '0'), 'box-' || lpad((i % 1000 + 1)::text, 4, '0'),
		        'linux', 'local', 'vm', 'snapshot ' || i, CASE WHEN i % 7 = 0 THEN 'before the migration' END,
		        now() - (i || ' minutes')::interval, CASE WHEN i % 3 = 0 THEN 'agent' ELSE 'owner' END,
		        CASE WHEN i % 3 = 0 THEN 'th' || lpad(((i % 1000 + 1) % 50 + 1)::text, 12, '0') END,
		        (i::bigint * 1000003) % 4000000000, 'own', 'person', 'ready', 1,
		        CASE WHEN i % 11 = 0 THEN now() + interval '20 days' END
		 FROM generate_series(1, 5000) i`,
	}
	for _, q := range stmts {
		if _, err := s.env.Pool.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

func benchPage(b *testing.B, s *site, target string, header map[string]string) {
	b.Helper()
	var size int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w := s.do(b, "GET", target, nil, header)
		if w.Code != http.StatusOK {
			b.Fatalf("%s answered %d", target, w.Code)
		}
		size = w.Body.Len()
	}
	b.ReportMetric(float64(size), "html-bytes")
}

// BenchmarkSnapshotsTab measures the Snapshots tab at 5,000 snapshots on
// 1,000 boxes: the first view (the page renders into a buffer, so its time
// is the time to the first byte), a search and a filter answered as the
// results fragment, and the next boxes as the owner scrolls.
func BenchmarkSnapshotsTab(b *testing.B) {
	s := benchSite(b)
	frag := map[string]string{"HX-Request": "true", "HX-Target": "div#snapshot-results"}
	b.Run("FirstView", func(b *testing.B) { benchPage(b, s, "/boxes/snapshots", nil) })
	b.Run("Search", func(b *testing.B) { benchPage(b, s, "/boxes/snapshots?q=box-0420", frag) })
	b.Run("FilterAgentsKept", func(b *testing.B) { benchPage(b, s, "/boxes/snapshots?by=agents&kept=1", frag) })
	b.Run("LoadMore", func(b *testing.B) {
		benchPage(b, s, "/boxes/snapshots?from=10", map[string]string{"HX-Request": "true", "HX-Target": "div#more-10"})
	})
}

// BenchmarkCoreList is the core's List alone, which the tab calls once: the
// part of the tab's time that is the core's.
func BenchmarkCoreList(b *testing.B) {
	s := benchSite(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.env.Core.List(context.Background(), snapshots.Owner(), snapshots.ListQuery{}); err != nil {
			b.Fatal(err)
		}
	}
}
