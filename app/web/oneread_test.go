package web

import (
	"context"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
	"github.com/boxsnap/boxsnap/providers/local"
)

// readTracer sees every query of the site's pool: where it ran (its
// connection, and whether inside a transaction block), and calls the hook
// after each, so a test can change the rows between two reads of a page.
type readTracer struct {
	mu    sync.Mutex
	on    bool
	reads []tracedRead
	after func(sql string)
}

// tracedRead is one query a page made: its SQL, its connection and
// whether it ran inside a transaction.
type tracedRead struct {
	sql  string
	conn *pgx.Conn
	inTx bool
}

type readKey struct{}

func (r *readTracer) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	r.mu.Lock()
	if r.on {
		r.reads = append(r.reads, tracedRead{sql: data.SQL, conn: conn, inTx: conn.PgConn().TxStatus() == 'T'})
	}
	r.mu.Unlock()
	return context.WithValue(ctx, readKey{}, data.SQL)
}

func (r *readTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	r.mu.Lock()
	f := r.after
	r.mu.Unlock()
	if sql, ok := ctx.Value(readKey{}).(string); ok && f != nil {
		f(sql)
	}
}

// between runs change once, from another connection, right after the
// page's first query named name, while get draws the page; it answers the
// page's body.
func (r *readTracer) between(t *testing.T, name string, change func(), get func() string) string {
	t.Helper()
	var once sync.Once
	r.mu.Lock()
	r.after = func(sql string) {
		if strings.Contains(sql, "-- name: "+name+" ") {
			once.Do(change)
		}
	}
	r.mu.Unlock()
	body := get()
	r.mu.Lock()
	r.after = nil
	r.mu.Unlock()
	ran := false
	once.Do(func() { ran = true })
	if ran {
		t.Fatalf("the page never read %s: the test changes nothing between its reads", name)
	}
	return body
}

// tracedSite is a site whose pool is traced, and another pool to change
// the rows meanwhile.
func tracedSite(t *testing.T) (*site, *readTracer, *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	dsn := dbtest.NewDSN(t)
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	tr := &readTracer{}
	cfg.ConnConfig.Tracer = tr
	cfg.MaxConns = 20
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	other, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Close)
	root := t.TempDir()
	if err := local.Passable(root, os.TempDir()); err != nil {
		t.Fatal(err)
	}
	env, err := coretest.Build(ctx, pool, coretest.Options{LocalRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Stop)
	return siteOn(t, env), tr, other
}

var (
	tabCountRE  = regexp.MustCompile(`<a href="(/boxes[a-z/]*)"[^>]*>[A-Za-z]+ <span class="count">([0-9]+)</span>`)
	navCountRE  = regexp.MustCompile(`class="nav-requests"[^>]*>Requests(?: <span class="count"[^>]*>([0-9]+)</span>)?</a>`)
	keptBadgeRE = regexp.MustCompile(`<span class="badge">Kept</span>`)
	liveRowRE   = regexp.MustCompile(`<li class="card group">`)
)

// tabCount is the count a Boxes page's tab (its address) says.
func tabCount(t *testing.T, body, href string) string {
	t.Helper()
	for _, m := range tabCountRE.FindAllStringSubmatch(body, -1) {
		if m[1] == href {
			return m[2]
		}
	}
	t.Fatalf("the page has no tab %s with a count", href)
	return ""
}

// TestListPagesReadOnce: each list page is drawn from one read of the
// records, so its counts and its rows never disagree, whatever an
// operation commits while the page is drawn. Right after each page's read
// of its rows, another connection changes what they count: a snapshot
// kept (the Snapshots tab's rows and its line), a box released (the
// Machines tab's count and its live boxes), a box out of the trash (the
// Trash tab's boxes and its count), a request answered (the Requests
// page's requests and the count beside Requests). Each page then
// says one state in every part, never the old in one and the new in
// another.
func TestListPagesReadOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, tr, other := tracedSite(t)
	_, agent, _ := s.env.Thread(t, "Fix the sign-in flow")
	s.env.Box(t, agent, "amber-fox")
	s.env.Box(t, snapshots.Owner(), "grey-ridge")
	sn := takeNamed(t, s, "amber-fox", "before the migration")
	exec := func(sql string, args ...any) func() {
		return func() {
			if _, err := other.Exec(ctx, sql, args...); err != nil {
				t.Errorf("%s: %v", sql, err)
			}
		}
	}

	// The Snapshots tab: its rows, then its line's counts.
	body := tr.between(t, "TabSnapshotsOfBoxes", exec("UPDATE snapshots SET kept_until = now() + interval '20 days' WHERE id = $1", sn.ID),
		func() string { return s.do(t, "GET", "/boxes/snapshots", nil, nil).Body.String() })
	line := pageText(regexp.MustCompile(`(?s)<span class="summary">.*?</span>`).FindString(body))
	rowKept, lineKept := keptBadgeRE.MatchString(body), strings.Contains(line, "1 kept")
	if rowKept != lineKept {
		t.Errorf("the Snapshots tab disagrees with itself: its row says ‘before the migration’ is kept (%v), its line says %q: they come from different reads", rowKept, line)
	}

	// The Machines tab: its tabs' counts, then its live boxes.
	body = tr.between(t, "TabTotals", exec("UPDATE boxes SET released_at = now(), state = 'released' WHERE name = 'grey-ridge'"),
		func() string { return s.do(t, "GET", "/boxes", nil, nil).Body.String() })
	live := body
	if i := strings.Index(live, "<h2>Released</h2>"); i >= 0 {
		live = live[:i]
	}
	if got, rows := tabCount(t, body, "/boxes"), len(liveRowRE.FindAllString(live, -1)); got != strconv.Itoa(rows) {
		t.Errorf("the Machines tab says %s machines but lists %d live boxes: they come from different reads", got, rows)
	}

	// The Trash tab: the boxes in the trash, then its tab's count.
	s.env.Box(t, snapshots.Owner(), "olive-pine")
	rel, err := s.env.Boxes.ReleaseBox(ctx, snapshots.Owner(), "olive-pine", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.env.Wait(t, rel); got.State != snapshots.OpDone {
		t.Fatalf("release olive-pine to the trash: %s %v", got.State, derefS(got.Error))
	}
	body = tr.between(t, "TrashList", exec("UPDATE boxes SET state = 'ready' WHERE name = 'olive-pine'"),
		func() string { return s.do(t, "GET", "/boxes/trash", nil, nil).Body.String() })
	if got, rows := tabCount(t, body, "/boxes/trash"), strings.Count(body, `<li class="card group trashed">`); got != strconv.Itoa(rows) {
		t.Errorf("the Trash tab says %s in the trash but lists %d boxes: they come from different reads", got, rows)
	}

	// The Requests page: its requests, then the count beside Requests.
	w := s.do(t, "POST", "/settings/snapshots/switches", url.Values{"switches": {"1"}, "agentsMayRestoreMemory": {"1"}, "pictures": {"1"}}, nil)
	if w.Code >= 400 {
		t.Fatalf("switching agents' restores off: %d", w.Code)
	}
	back := takeNamed(t, s, "amber-fox", "back to this")
	if _, err := s.env.Restores.Restore(ctx, agent, snapshots.RestoreRequest{Box: "amber-fox", Snapshot: back.ID, Replace: true}); err == nil {
		t.Fatal("with agents' restores off, the agent's restore ran without asking")
	} else if _, ok := approvals.AsAsked(err); !ok {
		t.Fatalf("the agent's restore: %v", err)
	}
	body = tr.between(t, "PersonApprovalsPending", exec("UPDATE approvals SET state = 'declined', answered_at = now() WHERE state = 'pending'"),
		func() string { return s.do(t, "GET", "/approvals", nil, nil).Body.String() })
	items := strings.Count(body, `/approve"`)
	nav := "0"
	if m := navCountRE.FindStringSubmatch(body); m != nil && m[1] != "" {
		nav = m[1]
	}
	if nav != strconv.Itoa(items) {
		t.Errorf("the Requests page lists %d waiting, yet the navigation says %s wait: they come from different reads", items, nav)
	}
}

// TestBoxPageReadsOnce: every record a box's page shows beside its
// snapshots (the requests for it, the box its take's refusal is planned
// on, the threads' titles its rows name) is read in the same transaction
// as the snapshots, so none of them can be of another moment.
func TestBoxPageReadsOnce(t *testing.T) {
	t.Parallel()
	s, tr, _ := tracedSite(t)
	_, agent, _ := s.env.Thread(t, "Fix the sign-in flow")
	s.env.Box(t, agent, "amber-fox")
	takeNamed(t, s, "amber-fox", "before the migration")
	tr.mu.Lock()
	tr.on, tr.reads = true, nil
	tr.mu.Unlock()
	s.do(t, "GET", "/boxes/amber-fox", nil, nil)
	tr.mu.Lock()
	reads := tr.reads
	tr.on = false
	tr.mu.Unlock()
	var view *pgx.Conn
	for _, r := range reads {
		if strings.Contains(r.sql, "-- name: CoreSnapshotsOfBox ") {
			view = r.conn
		}
	}
	if view == nil {
		t.Fatal("the box's page never read its snapshots")
	}
	for _, name := range []string{"PersonApprovalsPending", "ThreadTitles", "CoreBoxByName", "CoreBoxByID"} {
		seen := false
		for _, r := range reads {
			if !strings.Contains(r.sql, "-- name: "+name+" ") {
				continue
			}
			seen = true
			if !r.inTx || r.conn != view {
				t.Errorf("the box's page reads %s outside the transaction it reads the snapshots in: it can show another moment", name)
			}
		}
		if !seen {
			t.Errorf("the box's page never read %s", name)
		}
	}
	commits := 0
	for _, r := range reads {
		if r.conn == view && strings.EqualFold(strings.TrimSpace(r.sql), "commit") {
			commits++
		}
	}
	if commits > 1 {
		t.Errorf("the box's page ended %d transactions on its connection: it reads in more than one", commits)
	}
}
