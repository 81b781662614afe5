package web

import (
	"context"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// benchSite is the web app over boxes and snapshots made straight in the
// database by generate_series, a statement per table (the
// Snapshots tab at scale): one thread per 20 boxes, half the boxes a
// thread's; every 7th snapshot has a note, every 3rd an agent took, every
// 11th is kept for 20 days, every 13th kept for 3 (it goes within 7).
// Its pool carries tr, which counts the queries of each view.
func benchSite(b *testing.B, boxes, snaps int, tr *viewTracer) *site {
	b.Helper()
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(dbtest.NewDSN(b))
	if err != nil {
		b.Fatal(err)
	}
	cfg.ConnConfig.Tracer = tr
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	env, err := coretest.Build(ctx, pool, coretest.Options{NoWorkers: true, LocalRoot: b.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(env.Stop)
	s := siteOn(b, env)
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

// benchPage times one view, b.N times, and reports its size and how many
// queries it sent; with -v it logs the last view's queries, slowest first.
func benchPage(b *testing.B, s *site, tr *viewTracer, target string, header map[string]string) string {
	b.Helper()
	var body string
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tr.start()
		w := s.do(b, "GET", target, nil, header)
		if w.Code != http.StatusOK {
			b.Fatalf("%s answered %d", target, w.Code)
		}
		body = w.Body.String()
	}
	b.StopTimer()
	qs := tr.stop()
	b.ReportMetric(float64(len(body)), "html-bytes")
	b.ReportMetric(float64(len(qs)), "queries")
	if testing.Verbose() {
		sort.Slice(qs, func(i, j int) bool { return qs[i].took > qs[j].took })
		for _, q := range qs {
			b.Logf("%8.2f ms  %s", float64(q.took.Microseconds())/1000, q.name)
		}
	}
	return body
}

// viewTracer is a pgx tracer that keeps the queries of one view: each
// one's name (its sqlc name, or its first line) and how long it took.
type viewTracer struct {
	mu      sync.Mutex
	on      bool
	queries []tracedQuery
}

type tracedQuery struct {
	name string
	took time.Duration
}

type traceKey struct{}

type traceStart struct {
	name string
	at   time.Time
}

func (t *viewTracer) start() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.on, t.queries = true, nil
}

func (t *viewTracer) stop() []tracedQuery {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.on = false
	return t.queries
}

// TraceQueryStart notes the query's name and start.
func (t *viewTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	name, _, _ := strings.Cut(strings.TrimSpace(d.SQL), "\n")
	name = strings.TrimPrefix(name, "-- name: ")
	return context.WithValue(ctx, traceKey{}, traceStart{name: name, at: time.Now()})
}

// TraceQueryEnd keeps the query, while a view is traced.
func (t *viewTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	st, ok := ctx.Value(traceKey{}).(traceStart)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.on {
		t.queries = append(t.queries, tracedQuery{name: st.name, took: time.Since(st.at)})
	}
}

var moreLink = regexp.MustCompile(`<div id="([^"]+)" class="more" hx-get="([^"]+)"`)

// BenchmarkSnapshotsTab measures the Snapshots tab at 100,000 snapshots on
// 10,000 boxes (the size an install must stay fast at; -short: 5,000
// on 1,000): the first view
// (the page renders into a buffer, so its time is the time to the last
// byte), a search and a filter answered as the results fragment, the next
// boxes as the owner scrolls, by the first view's own "more" link, and the
// Machines tab's first view.
func BenchmarkSnapshotsTab(b *testing.B) {
	boxes, snaps := 10000, 100000
	if testing.Short() {
		boxes, snaps = 1000, 5000
	}
	tr := &viewTracer{}
	s := benchSite(b, boxes, snaps, tr)
	frag := map[string]string{"HX-Request": "true", "HX-Target": "div#snapshot-results"}
	var first string
	b.Run("FirstView", func(b *testing.B) { first = benchPage(b, s, tr, "/boxes/snapshots", nil) })
	b.Run("Search", func(b *testing.B) { benchPage(b, s, tr, "/boxes/snapshots?q=box-04200", frag) })
	b.Run("FilterAgentsKept", func(b *testing.B) { benchPage(b, s, tr, "/boxes/snapshots?by=agents&kept=1", frag) })
	b.Run("LoadMore", func(b *testing.B) {
		m := moreLink.FindStringSubmatch(first)
		if m == nil {
			b.Fatal("the first view has no more link")
		}
		benchPage(b, s, tr, html.UnescapeString(m[2]), map[string]string{"HX-Request": "true", "HX-Target": "div#" + m[1]})
	})
	b.Run("Machines", func(b *testing.B) { benchPage(b, s, tr, "/boxes", nil) })
}

// BenchmarkCoreList is the core's List of every snapshot (the API's
// listing of one box reads this way), at 5,000 snapshots on 1,000 boxes.
func BenchmarkCoreList(b *testing.B) {
	s := benchSite(b, 1000, 5000, &viewTracer{})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.env.Core.List(context.Background(), snapshots.Owner(), snapshots.ListQuery{}); err != nil {
			b.Fatal(err)
		}
	}
}
