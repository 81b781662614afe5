package tab_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/tab"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// monthlyOf is a price a month as the pages said it.
func monthlyOf(raw json.RawMessage) float64 {
	var p providers.Price
	if len(raw) == 0 || json.Unmarshal(raw, &p) != nil || !p.Known {
		return 0
	}
	switch p.Per {
	case "day":
		return p.Amount * 30
	case "month":
		return p.Amount
	}
	return 0
}

// refTab is the tab as the handler computed it before it moved to SQL,
// from the core's List of every snapshot: the boxes in order, each with
// the IDs of its matching snapshots in order. first is the person's first
// view (nothing narrows, newest first), whose boxes with newest snapshots
// taken at the same instant come in the order of those snapshots' IDs.
func refTab(list []snapshots.BoxSnapshots, titles map[string]string, q tab.TabQuery, now time.Time, first bool) []string {
	sortBy := q.Sort
	if sortBy == "" {
		sortBy = "newest"
	}
	size := func(sn *snapshots.Snapshot) int64 {
		if sn.SizeBytes == nil {
			return -1
		}
		return *sn.SizeBytes
	}
	monthly := monthlyOf
	less := func(a, b *snapshots.Snapshot, by string) bool {
		switch by {
		case "oldest":
			return a.TakenAt.Before(b.TakenAt)
		case "largest":
			return size(a) > size(b)
		case "price":
			return monthly(a.Price) > monthly(b.Price)
		}
		return a.TakenAt.After(b.TakenAt)
	}
	match := func(b *snapshots.Box, sn *snapshots.Snapshot) bool {
		if q.Where != "" && b.BackendID+":"+b.Host != q.Where {
			return false
		}
		holds := sn.Holds
		if sn.Scope == string(providers.ScopeDevice) {
			holds = "device"
		}
		if q.Holds != "" && holds != q.Holds {
			return false
		}
		switch q.By {
		case "you":
			if sn.ByKind != "owner" && sn.ByKind != "cli" {
				return false
			}
		case "agents":
			if sn.ByKind != "agent" {
				return false
			}
		}
		if q.Kept && !sn.Kept() || q.Undos && !sn.IsUndo() {
			return false
		}
		if q.Soon && !(sn.Kept() && sn.KeptUntil.Sub(now) < snapshots.EndingSoonDays*24*time.Hour) {
			return false
		}
		if q.Search != "" {
			note, title := "", ""
			if sn.Note != nil {
				note = *sn.Note
			}
			if b.ThreadID != nil {
				title = titles[*b.ThreadID]
			}
			for _, f := range []string{sn.Name, note, b.Name, title} {
				if strings.Contains(strings.ToLower(f), strings.ToLower(q.Search)) {
					return true
				}
			}
			return false
		}
		return true
	}
	type group struct {
		b   *snapshots.Box
		sns []*snapshots.Snapshot
	}
	var groups []group
	for _, bs := range list {
		var m []*snapshots.Snapshot
		for _, sn := range bs.Snapshots {
			if match(bs.Box, sn) {
				m = append(m, sn)
			}
		}
		if len(m) > 0 {
			by := sortBy
			if by == "box" || by == tab.SortBoxes {
				by = "newest"
			}
			sort.SliceStable(m, func(i, j int) bool { return less(m[i], m[j], by) })
			groups = append(groups, group{bs.Box, m})
		}
	}
	// The list's order (live boxes first, by name), with the ID where it
	// left ties to the database.
	released := func(b *snapshots.Box) bool { return b.State == "released" }
	sort.SliceStable(groups, func(i, j int) bool {
		a, b := groups[i].b, groups[j].b
		if released(a) != released(b) {
			return !released(a)
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.ID < b.ID
	})
	sort.SliceStable(groups, func(i, j int) bool {
		a, b := groups[i], groups[j]
		switch sortBy {
		case tab.SortBoxes:
			return false
		case "box":
			return a.b.Name < b.b.Name
		}
		if first && sortBy == "newest" && a.sns[0].TakenAt.Equal(b.sns[0].TakenAt) {
			return a.sns[0].ID > b.sns[0].ID // the first view's walk
		}
		return less(a.sns[0], b.sns[0], sortBy)
	})
	var out []string
	for _, g := range groups {
		ids := make([]string, len(g.sns))
		for i, sn := range g.sns {
			ids[i] = sn.ID
		}
		out = append(out, g.b.Name+"/"+g.b.ID+": "+strings.Join(ids, " "))
	}
	return out
}

// walkTab reads every page of the tab, limit boxes at a time, and as many
// as hold 40 snapshots.
func walkTab(t *testing.T, e *coretest.Env, c snapshots.Caller, q tab.TabQuery, limit int) (out []string, pages int, matching int) {
	t.Helper()
	q.Limit, q.Rows = limit, 40
	seen := 0
	for {
		p, err := e.Tab.Snapshots(context.Background(), c, q)
		if err != nil {
			t.Fatalf("%+v: %v", q, err)
		}
		pages++
		for _, tb := range p.Boxes {
			ids := make([]string, len(tb.Matched))
			for i, sn := range tb.Matched {
				ids[i] = sn.ID
				seen++
			}
			out = append(out, tb.Box.Name+"/"+tb.Box.ID+": "+strings.Join(ids, " "))
		}
		if pages == 1 {
			matching = p.SnapshotsMatching
		}
		if p.Next == "" {
			break
		}
		if len(p.Boxes) == 0 && c.Kind != snapshots.CallerAgent {
			t.Fatalf("%+v: an empty page with a next one", q)
		}
		q.After = p.Next
		if pages > 1000 {
			t.Fatal("the pages do not end")
		}
	}
	if c.Kind != snapshots.CallerAgent && matching != 0 && seen != matching {
		t.Errorf("%+v: the pages hold %d snapshots, the count says %d", q, seen, matching)
	}
	return out, pages, matching
}

// TestTabMatchesTheList: every search, filter and sort of the Snapshots tab,
// paged in SQL 7 boxes or 40 snapshots at a time, gives the boxes and snapshots, in the
// order, that the handler gave from the core's list of every snapshot; for
// the person and for an agent, who sees its own thread's alone.
func TestTabMatchesTheList(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	e := coretest.New(t, coretest.Options{NoWorkers: true, Now: func() time.Time { return now }})
	coretest.SeedTab(t, e, 120, 1500)
	ctx := context.Background()
	ths, err := e.Boxes.Threads(ctx, snapshots.Owner())
	if err != nil {
		t.Fatal(err)
	}
	titles := map[string]string{}
	for _, th := range ths {
		titles[th.ID] = th.Title
	}
	queries := []tab.TabQuery{{}, {Search: "migration"}, {Search: "SIGN-IN"}, {Search: "box-00004"}, {Search: "100%"}, {Search: "_1"},
		{Search: "nothing has this"}, {Where: "local:"}, {Where: "pve:pve-2"}, {Where: "pve"}, {Holds: "disk"}, {Holds: "disk-and-memory"},
		{Holds: "device"}, {By: "you"}, {By: "agents"}, {Kept: true}, {Undos: true}, {Soon: true, Now: now}, {By: "agents", Kept: true},
		{Search: "snapshot 1", Holds: "disk", By: "you", Where: "local:"}}
	var all []tab.TabQuery
	for _, q := range queries {
		for _, by := range append(slices.Clone(tab.TabSorts), tab.SortBoxes) {
			q.Sort = by
			all = append(all, q)
		}
	}
	for _, c := range []snapshots.Caller{snapshots.Owner(), snapshots.Agent("th000000000002"), snapshots.Agent("th000000000003")} {
		list, err := e.Core.List(ctx, c, snapshots.ListQuery{})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range all {
			unfiltered := q.Search == "" && q.Where == "" && q.Holds == "" && q.By == "" && !q.Kept && !q.Undos && !q.Soon
			want := refTab(list, titles, q, now, unfiltered && c.Kind == snapshots.CallerOwner)
			got, pages, _ := walkTab(t, e, c, q, 7)
			if !slices.Equal(got, want) {
				t.Errorf("%s %+v (%d pages):\n got %d boxes %.300q\nwant %d boxes %.300q", c.Kind, q, pages, len(got), got, len(want), want)
			}
			if c.Kind == snapshots.CallerOwner && unfiltered && len(want) < 100 {
				t.Fatalf("the seed has only %d boxes with snapshots", len(want))
			}
		}
	}
	// A place the listing never gave is refused, not read from the start.
	if _, err := e.Tab.Snapshots(ctx, snapshots.Owner(), tab.TabQuery{Limit: 5, After: "not a place"}); err == nil ||
		!strings.Contains(err.Error(), "after is not a place this listing gave") {
		t.Fatalf("a made-up cursor: %v", err)
	}
}

// TestTabTallyCountsEverySnapshot: the tab's counts, which triggers keep
// beside the records (migration 00140), add up to what the core's list of
// every snapshot says: after the seed, after each kind of change a record
// goes through (a take, a keep and an unkeep, a failed take, a size and a
// price learnt, a delete, a box moved to another host), and after
// Tab.Tally and housekeeping fold the counts' rows.
func TestTabTallyCountsEverySnapshot(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	e := coretest.New(t, coretest.Options{NoWorkers: true})
	coretest.SeedTab(t, e, 40, 400)
	ctx := context.Background()
	type sums struct {
		db.TabTallyRow
		Soon int
	}
	check := func(stage string) {
		t.Helper()
		list, err := e.Core.List(ctx, snapshots.Owner(), snapshots.ListQuery{})
		if err != nil {
			t.Fatal(err)
		}
		var want, got sums
		wantWhere, gotWhere := map[string]int{}, map[string]int{}
		wantHolds, gotHolds := map[string]int{}, map[string]int{}
		for _, bs := range list {
			for _, sn := range bs.Snapshots {
				want.Snapshots++
				wantWhere[bs.Box.BackendID+":"+bs.Box.Host]++
				holds := sn.Holds
				if sn.Scope == "device" {
					holds = "device"
				}
				wantHolds[holds]++
				switch sn.ByKind {
				case "owner", "cli":
					want.ByYou++
				case "agent":
					want.ByAgents++
				}
				if sn.Kept() {
					want.Kept++
					if sn.KeptUntil.Sub(now) < snapshots.EndingSoonDays*24*time.Hour {
						want.Soon++
					}
				}
				if sn.IsUndo() {
					want.Undos++
				}
				if sn.State == snapshots.StateFailed {
					want.Failed++
				}
				want.Monthly += monthlyOf(sn.Price)
				if sn.SizeBytes != nil {
					want.Sized++
					want.SizeBytes += *sn.SizeBytes
				}
			}
		}
		tally, err := e.Tab.Tally(ctx, snapshots.Owner(), now)
		if err != nil {
			t.Fatal(err)
		}
		got.Soon = tally.Soon
		for _, r := range tally.Rows {
			got.Snapshots += r.Snapshots
			got.ByYou += r.ByYou
			got.ByAgents += r.ByAgents
			got.Kept += r.Kept
			got.Undos += r.Undos
			got.Failed += r.Failed
			got.Sized += r.Sized
			got.SizeBytes += r.SizeBytes
			got.Monthly += r.Monthly
			gotWhere[r.BackendID+":"+r.Host] += r.Snapshots
			gotHolds[r.Holds] += r.Snapshots
		}
		if math.Abs(got.Monthly-want.Monthly) > 1e-6 || want.Monthly == 0 {
			t.Errorf("%s: the tally's rate a month is %v, the list's %v", stage, got.Monthly, want.Monthly)
		}
		got.Monthly = want.Monthly
		if got != want || !maps.Equal(gotWhere, wantWhere) || !maps.Equal(gotHolds, wantHolds) {
			t.Errorf("%s: the tally says %+v %v %v, the list %+v %v %v", stage, got, gotWhere, gotHolds, want, wantWhere, wantHolds)
		}
	}
	check("after the seed")
	exec := func(q string) {
		t.Helper()
		if _, err := e.Pool.Exec(ctx, q); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
	// Each statement as the core's writes change a record, some in one
	// transaction.
	exec(`INSERT INTO snapshots (id, box_id, box_name, box_kind, backend_id, host, name, taken_at, by_kind, owner_kind, state, holds, price)
	      VALUES ('snx000000001', 'bx000000000003', 'box', 'linux', 'pve', 'pve-2', 'taken now', now(), 'agent', 'person', 'taking', 'disk-and-memory',
	              '{"amount": 2, "currency": "EUR", "per": "month", "known": true}')`)
	exec(`UPDATE snapshots SET state = 'ready', size_bytes = 5000000000 WHERE id = 'snx000000001'`)
	exec(`UPDATE snapshots SET kept_until = timestamptz '2026-12-02 00:00:00+00' WHERE id IN ('sn000000000001', 'sn000000000008', 'sn000000000016')`)
	exec(`UPDATE snapshots SET kept_until = NULL WHERE id IN ('sn000000000011', 'sn000000000026')`)
	exec(`UPDATE snapshots SET state = 'failed', error = 'the disk filled' WHERE id = 'sn000000000002'`)
	exec(`UPDATE snapshots SET price = '{"amount": 0.5, "currency": "USD", "per": "day", "known": true}' WHERE id = 'sn000000000004'`)
	exec(`UPDATE snapshots SET size_bytes = NULL WHERE id = 'sn000000000005'`)
	exec(`UPDATE snapshots SET note = 'only a note', state_at = now() WHERE id = 'sn000000000006'`)
	exec(`BEGIN; DELETE FROM snapshots WHERE id IN ('sn000000000029', 'sn000000000031', 'sn000000000019');
	      UPDATE snapshots SET scope = 'device' WHERE id = 'sn000000000007'; COMMIT`)
	exec(`UPDATE boxes SET host = 'pve-9' WHERE id = 'bx000000000003'`)
	check("after takes, keeps, unkeeps, a failure, a price, a size, deletes and a move")
	// Many changes: the counts' rows grow past the fold, and Tab.Tally folds
	// them to one a group.
	exec(`UPDATE snapshots SET kept_until = timestamptz '2026-12-20 00:00:00+00' WHERE kept_until IS NULL AND id < 'sn000000000300'`)
	var rows, groups int
	if err := e.Pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT (backend_id, host, holds, currency)) FROM snapshot_tally`).Scan(&rows, &groups); err != nil {
		t.Fatal(err)
	}
	if rows < groups+256 {
		t.Fatalf("the counts have %d rows for %d groups: too few to fold", rows, groups)
	}
	check("before the fold")
	if err := e.Pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT (backend_id, host, holds, currency)) FROM snapshot_tally`).Scan(&rows, &groups); err != nil {
		t.Fatal(err)
	}
	if rows != groups {
		t.Errorf("after the fold the counts have %d rows for %d groups", rows, groups)
	}
	check("after the fold")
	// Housekeeping folds them too, for an install whose tab nobody opens.
	exec(`UPDATE snapshots SET kept_until = NULL WHERE id < 'sn000000000300'`)
	if _, err := e.Sweeps.Housekeep(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.Pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT (backend_id, host, holds, currency)) FROM snapshot_tally`).Scan(&rows, &groups); err != nil {
		t.Fatal(err)
	}
	if rows != groups {
		t.Errorf("after housekeeping the counts have %d rows for %d groups", rows, groups)
	}
	check("after housekeeping")
}

// explainer answers each query with no rows, keeping the plan EXPLAIN
// (FORMAT JSON) gives for it.
type explainer struct {
	pgx.Tx
	plan []any
}

func (x *explainer) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := x.Tx.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+sql, args...).Scan(&x.plan); err != nil {
		return nil, fmt.Errorf("explain: %w", err)
	}
	return x.Tx.Query(ctx, "SELECT 1 WHERE false")
}

// QueryRow answers a :one query with no row (pgx.ErrNoRows), keeping its
// plan.
func (x *explainer) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if err := x.Tx.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+sql, args...).Scan(&x.plan); err != nil {
		return errRow{fmt.Errorf("explain: %w", err)}
	}
	return x.Tx.QueryRow(ctx, "SELECT 1 WHERE false")
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// planNodes lists an EXPLAIN (FORMAT JSON) plan's nodes as "type index",
// or "type on table" for a scan that reads no index.
func planNodes(v any, out *[]string) {
	switch n := v.(type) {
	case map[string]any:
		if typ, ok := n["Node Type"].(string); ok {
			idx, _ := n["Index Name"].(string)
			if rel, ok := n["Relation Name"].(string); ok && idx == "" {
				idx = "on " + rel
			}
			*out = append(*out, strings.TrimSpace(typ+" "+idx))
		}
		for _, c := range n {
			planNodes(c, out)
		}
	case []any:
		for _, c := range n {
			planNodes(c, out)
		}
	}
}

// TestTabQueriesUseIndexes: on an install of 20,000 snapshots on 2,000
// boxes, with sequential scans off, EXPLAIN of the tab's real queries with a
// search, a filter, the first view and a page's rows shows the indexes
// migrations 00080 and 00081 made (and snapshots_box); the counts read
// snapshot_tally and no snapshot, and the keeps ending soon, the gone
// backends' snapshots and a live box per kind read migration 00140's
// indexes, the Machines tab's pages 00141's, its counts snapshots_box and
// the Select mode's picks snapshots_pkey.
func TestTabQueriesUseIndexes(t *testing.T) {
	t.Parallel()
	e := coretest.New(t, coretest.Options{NoWorkers: true})
	coretest.SeedTab(t, e, 2000, 20000)
	ctx := context.Background()
	// explain runs query with EXPLAIN (FORMAT JSON) in front of its SQL,
	// planned for its arguments as the core plans it, with seq scans off:
	// on this small install a scan would do, and the test asks whether the
	// query can read the indexes at all.
	explain := func(query func(db.DBTX) error) []string {
		t.Helper()
		tx, err := e.Pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if _, err := tx.Exec(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
			t.Fatal(err)
		}
		x := &explainer{Tx: tx}
		if err := query(snapshots.Planned(x)); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			t.Fatal(err)
		}
		var nodes []string
		planNodes(x.plan, &nodes)
		return nodes
	}
	page := func(p db.TabPageParams) func(db.DBTX) error {
		p.Sort, p.PageSize = "newest", 10
		return func(d db.DBTX) error { _, err := e.Store.TabPage(ctx, d, p); return err }
	}
	uses := func(what string, nodes []string, index string) {
		t.Helper()
		for _, n := range nodes {
			if strings.HasSuffix(n, " "+index) {
				return
			}
		}
		t.Errorf("%s does not read %s: %q", what, index, nodes)
	}
	pattern := "%box-0042%"
	search := explain(page(db.TabPageParams{Search: &pattern}))
	uses("a search", search, "snapshots_name_trgm")
	uses("a search", search, "snapshots_note_trgm")
	uses("a search", search, "boxes_name_trgm")
	uses("a search", search, "snapshots_box")
	kept := explain(page(db.TabPageParams{Kept: true, ByKinds: []string{"agent"}}))
	uses("Kept, by agents", kept, "snapshots_kept")
	week := time.Now().Add(7 * 24 * time.Hour)
	soon := explain(page(db.TabPageParams{SoonBefore: &week}))
	uses("Goes within 7 days", soon, "snapshots_kept")
	first := explain(page(db.TabPageParams{}))
	uses("an unfiltered page's rows", first, "snapshots_box")
	newest := explain(func(d db.DBTX) error {
		_, err := e.Store.TabNewestBoxes(ctx, d, db.TabNewestBoxesParams{PageSize: 11})
		return err
	})
	uses("the first view", newest, "snapshots_taken")
	uses("the first view", newest, "snapshots_box")
	ids := []string{"bx000000000001", "bx000000000002"}
	rows := explain(func(d db.DBTX) error { _, err := e.Store.TabSnapshotsOfBoxes(ctx, d, ids); return err })
	uses("the page's snapshots", rows, "snapshots_box")
	boxes := explain(func(d db.DBTX) error { _, err := e.Store.TabBoxesByID(ctx, d, ids); return err })
	uses("the page's boxes", boxes, "boxes_pkey")
	priced := explain(func(d db.DBTX) error { _, err := e.Store.PersonPaidHeld(ctx, d, "local"); return err })
	uses("the line's rate held", priced, "snapshots_priced")
	// The counts (migration 00140): the tally's own rows, no snapshot.
	tally := explain(func(d db.DBTX) error { _, err := e.Store.TabTally(ctx, d); return err })
	for _, n := range tally {
		if strings.Contains(n, "snapshots") && !strings.HasSuffix(n, " on snapshot_tally") {
			t.Errorf("the tab's counts read the snapshots: %q", tally)
		}
	}
	if !slices.ContainsFunc(tally, func(n string) bool { return strings.HasSuffix(n, " on snapshot_tally") }) {
		t.Errorf("the tab's counts do not read snapshot_tally: %q", tally)
	}
	soonCount := explain(func(d db.DBTX) error { _, err := e.Store.TabSoon(ctx, d, week); return err })
	uses("the count of keeps ending soon", soonCount, "snapshots_kept")
	gone := explain(func(d db.DBTX) error { _, err := e.Store.TabGoneBackendSnapshots(ctx, d, []string{"pve"}); return err })
	uses("a gone backend's snapshots", gone, "snapshots_backend")
	kinds := explain(func(d db.DBTX) error { _, err := e.Store.TabLiveBoxPerKind(ctx, d); return err })
	uses("a live box per kind", kinds, "boxes_live_kind")
	// The Machines tab's pages and counts, and the Select mode's picks
	// (migration 00141).
	after, afterID := "box-00500", "bx000000000500"
	for _, released := range []bool{false, true} {
		index := map[bool]string{false: "boxes_machines", true: "boxes_released"}[released]
		first := explain(func(d db.DBTX) error {
			_, err := e.Store.TabMachines(ctx, d, db.TabMachinesParams{Released: released, PageSize: 51})
			return err
		})
		uses("the Machines tab's first page", first, index)
		next := explain(func(d db.DBTX) error {
			_, err := e.Store.TabMachines(ctx, d, db.TabMachinesParams{Released: released, PageSize: 51, AfterName: &after, AfterID: &afterID})
			return err
		})
		uses("the Machines tab's next page", next, index)
	}
	counts := explain(func(d db.DBTX) error { _, err := e.Store.TabBoxCounts(ctx, d, ids); return err })
	uses("the Machines tab's counts", counts, "snapshots_box")
	picks := explain(func(d db.DBTX) error {
		_, err := e.Store.TabSnapshotsByID(ctx, d, []string{"sn000000000001", "sn000000000002"})
		return err
	})
	uses("the selected snapshots", picks, "snapshots_pkey")
}
