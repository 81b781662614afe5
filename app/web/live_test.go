package web

import (
	"context"
	"html"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local"
)

// takeNamed takes a snapshot of box and waits for it.
func takeNamed(t *testing.T, s *site, box, name string) *snapshots.Snapshot {
	t.Helper()
	op, sn, err := s.env.Take.Take(context.Background(), snapshots.Owner(), take.TakeRequest{Box: box, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.env.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("take %s of %s: %s %v", name, box, got.State, derefS(got.Error))
	}
	return sn
}

// pageText is a page's text, its tags dropped and its entities read.
func pageText(body string) string {
	return strings.Join(strings.Fields(html.UnescapeString(tagRE.ReplaceAllString(body, " "))), " ")
}

var nowRowRE = regexp.MustCompile(`(?s)<li class="snap now" id="now-row">.*?</li>`)

// nowRowText is the text of a box page's Now row.
func nowRowText(t *testing.T, s *site, box string) string {
	t.Helper()
	m := nowRowRE.FindString(s.do(t, "GET", "/boxes/"+box, nil, nil).Body.String())
	if m == "" {
		t.Fatalf("%s's page has no Now row", box)
	}
	return pageText(m)
}

// queryTracer calls end after each query with its SQL.
type queryTracer struct {
	end func(sql string)
}

type sqlKey struct{}

func (q *queryTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	return context.WithValue(ctx, sqlKey{}, data.SQL)
}

func (q *queryTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	if sql, ok := ctx.Value(sqlKey{}).(string); ok && q.end != nil {
		q.end(sql)
	}
}

// TestPageReadsOnce: every part of a box's page is drawn from one read of
// the box. Right after the page's first read of the box's snapshots, the
// head snapshot is renamed by another connection; the page then says one
// name in every part (the card's row, the Now row, the Head fact), never
// the old name in one part and the new in another.
func TestPageReadsOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := dbtest.NewDSN(t)
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	tracer := &queryTracer{}
	var hook atomic.Pointer[func(sql string)]
	tracer.end = func(sql string) {
		if f := hook.Load(); f != nil {
			(*f)(sql)
		}
	}
	cfg.ConnConfig.Tracer = tracer
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
	s := siteOn(t, env)
	s.env.Box(t, snapshots.Owner(), "calm-moss")
	sn := takeNamed(t, s, "calm-moss", "before my edit")

	var once sync.Once
	f := func(sql string) {
		if !strings.Contains(sql, "-- name: CoreSnapshotsOfBox") {
			return
		}
		once.Do(func() {
			if _, err := other.Exec(ctx, "UPDATE snapshots SET name = 'renamed meanwhile' WHERE id = $1", sn.ID); err != nil {
				t.Errorf("rename between two reads: %v", err)
			}
		})
	}
	hook.Store(&f)
	body := s.do(t, "GET", "/boxes/calm-moss", nil, nil).Body.String()
	hook.Store(nil)
	text := pageText(body)
	old, renamed := strings.Contains(text, "‘before my edit’"), strings.Contains(text, "‘renamed meanwhile’")
	if old && renamed {
		t.Fatalf("two parts of calm-moss's page disagree on its head's name (one says ‘before my edit’, another ‘renamed meanwhile’): they come from different reads:\n%s", text)
	}
	if !old && !renamed {
		t.Fatalf("calm-moss's page names its head in no part:\n%s", text)
	}
	// Its live region, fetched again, is the whole page below the
	// navigation: the header's Undo, the facts and the history come with it.
	live := s.do(t, "GET", "/boxes/calm-moss/live?in=page&back=/boxes/calm-moss", nil, nil).Body.String()
	for _, part := range []string{`id="facts-h"`, `id="history-h"`, `id="snapcard-h"`, `<h1>calm-moss</h1>`} {
		if !strings.Contains(live, part) {
			t.Errorf("the box page's refresh leaves out %s: a part that does not refresh can disagree with one that does", part)
		}
	}
}

// TestNowRowTruth: the Now row says "unchanged since ‘X’" when the box
// holds nothing newer than its head, "changed since ‘X’ (N files)" when it
// does, and "cannot tell on this backend" where the backend cannot tell.
func TestNowRowTruth(t *testing.T) {
	t.Parallel()
	be, _ := simulatedProxmox(t)
	s := newSite(t, coretest.Options{Extra: []snapshots.Backend{be}, Install: simInstall})
	ctx := context.Background()
	b := s.env.Box(t, snapshots.Owner(), "calm-moss")
	takeNamed(t, s, "calm-moss", "before my edit")
	if got := nowRowText(t, s, "calm-moss"); !strings.Contains(got, "unchanged since ‘before my edit’") || strings.Contains(got, "in no snapshot yet") {
		t.Errorf("calm-moss holds nothing newer than ‘before my edit’, yet its Now row says: %s", got)
	}
	dir := s.env.Local.BoxDir(providers.Guest{Backend: b.BackendID, Kind: b.Kind, Ref: b.GuestRef, Generation: b.Generation})
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("an edit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := nowRowText(t, s, "calm-moss"); !strings.Contains(got, "changed since ‘before my edit’") || !strings.Contains(got, "(1 file)") || strings.Contains(got, "unchanged") {
		t.Errorf("calm-moss changed one file since ‘before my edit’, yet its Now row says: %s", got)
	}
	takeNamed(t, s, "calm-moss", "after my edit")
	if got := nowRowText(t, s, "calm-moss"); !strings.Contains(got, "unchanged since ‘after my edit’") {
		t.Errorf("right after a take, calm-moss's Now row says: %s", got)
	}

	if _, err := s.env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "grey-ridge", Backend: be.ID, Kind: "lxc", Adopt: "214"}); err != nil {
		t.Fatal(err)
	}
	takeNamed(t, s, "grey-ridge", "before the migration")
	if got := nowRowText(t, s, "grey-ridge"); !strings.Contains(got, "cannot tell on this backend") || strings.Contains(got, "unchanged") {
		t.Errorf("Proxmox cannot tell whether grey-ridge changed, yet its Now row says: %s", got)
	}
}

var undoHrefRE = regexp.MustCompile(`/boxes/[a-z-]+/snapshots/(sn[0-9A-Za-z]+)/restore`)

// undoTargets are the snapshots the page's Undo controls go to: the
// header's (#undo) and the notice's (#undo-btn).
func undoTargets(body string) (header, notice string) {
	for _, id := range []string{`id="undo"`, `id="undo-btn"`} {
		i := strings.Index(body, id)
		if i < 0 {
			continue
		}
		start := strings.LastIndex(body[:i], "<a ")
		end := strings.Index(body[i:], ">")
		m := undoHrefRE.FindStringSubmatch(body[start : i+end])
		if m == nil {
			continue
		}
		if id == `id="undo"` {
			header = m[1]
		} else {
			notice = m[1]
		}
	}
	return header, notice
}

var noticeRE = regexp.MustCompile(`(?s)<div class="notice[^"]*" role="status">.*?</div>`)

// noticesText is the text of a box page's notices.
func noticesText(body string) string {
	return pageText(strings.Join(noticeRE.FindAllString(body, -1), " "))
}

// TestNoticeNamesOnlyWhatExists: the notice after a restore names only
// snapshots that exist; after a reset it no longer speaks of the restore
// before it; and both Undo controls, the notice's and the header's, go to
// the same snapshot.
func TestNoticeNamesOnlyWhatExists(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{})
	ctx := context.Background()
	s.env.Box(t, snapshots.Owner(), "calm-moss")
	target := takeNamed(t, s, "calm-moss", "before the migration")
	takeNamed(t, s, "calm-moss", "before my edit")
	op, err := s.env.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "calm-moss", Snapshot: target.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.env.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("restore: %s %v", got.State, derefS(got.Error))
	}
	body := s.do(t, "GET", "/boxes/calm-moss", nil, nil).Body.String()
	header, notice := undoTargets(body)
	if header == "" || notice == "" || header != notice {
		t.Errorf("after the restore, the header's Undo goes to %q and the notice's to %q: both must go to the same snapshot", header, notice)
	}
	// The restore's target is deleted: the notice no longer names it.
	del, err := s.env.Keeps.Delete(ctx, snapshots.Owner(), snapshots.DeleteRequest{Box: "calm-moss", Snapshot: target.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.env.Wait(t, del); got.State != snapshots.OpDone {
		t.Fatalf("delete: %s %v", got.State, derefS(got.Error))
	}
	text := noticesText(s.do(t, "GET", "/boxes/calm-moss", nil, nil).Body.String())
	if strings.Contains(text, "‘before the migration’") {
		t.Errorf("the notice names ‘before the migration’, which was deleted: %s", text)
	}
	if !strings.Contains(text, "Restored at") {
		t.Errorf("the restore's notice is gone though its restore is within the day:\n%s", text)
	}
	// A reset after the restore: the notice speaks of the restore no more,
	// and the only Undo is the reset's.
	rop, err := s.env.Restores.Resets().Reset(ctx, snapshots.Owner(), restore.ResetRequest{Box: "calm-moss", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.env.Wait(t, rop); got.State != snapshots.OpDone {
		t.Fatalf("reset: %s %v", got.State, derefS(got.Error))
	}
	body = s.do(t, "GET", "/boxes/calm-moss", nil, nil).Body.String()
	text = noticesText(body)
	if strings.Contains(text, "Restored at") {
		t.Errorf("after the reset, the notice still speaks of the restore before it:\n%s", text)
	}
	header, notice = undoTargets(body)
	if notice != "" && notice != header {
		t.Errorf("after the reset, the notice's Undo goes to %q and the header's to %q", notice, header)
	}
	undo, err := s.env.Restores.Resets().NewestUndo(ctx, snapshots.Owner(), "calm-moss")
	if err != nil || undo == nil {
		t.Fatalf("the reset's undo: %v, %v", undo, err)
	}
	if header != undo.ID {
		t.Errorf("after the reset, the header's Undo goes to %q, not to the reset's undo %s", header, undo.ID)
	}
}

var timelineWordsRE = regexp.MustCompile(`(?s)<section class="card timeline".*?</section>`)

// timelineText is the text of a box page's timeline card.
func timelineText(t *testing.T, s *site, box string) string {
	t.Helper()
	body := s.do(t, "GET", "/boxes/"+box, nil, nil).Body.String()
	m := timelineWordsRE.FindString(body)
	if m == "" {
		t.Fatalf("%s's page has no timeline", box)
	}
	return pageText(m)
}

// TestTimelineWordsMatchTheBox: the timeline says what the automatic
// history does for the box as it is: checked every 15 s while it runs, on
// but waiting while it is stopped, off when it is off; Settings says the
// same of each backend's boxes. Each sentence is checked against the box's
// state as its backend says it.
func TestTimelineWordsMatchTheBox(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{})
	ctx := context.Background()
	s.env.Box(t, snapshots.Owner(), "calm-moss")
	st, err := s.env.Boxes.BoxStatus(ctx, snapshots.Owner(), "calm-moss")
	if err != nil {
		t.Fatal(err)
	}
	hist, err := s.env.Boxes.BoxHistorySettings(ctx, snapshots.Owner(), "calm-moss")
	if err != nil {
		t.Fatal(err)
	}
	every := pagemodel.EveryWords(hist.Every)
	got := timelineText(t, s, "calm-moss")
	switch {
	case !hist.On:
		t.Fatalf("automatic snapshots are off for a new local box: %+v", hist)
	case st.Running:
		if !strings.Contains(got, "calm-moss runs, so boxsnap checks it every "+every) {
			t.Errorf("calm-moss runs, yet its timeline says: %s", got)
		}
	default:
		if !strings.Contains(got, "calm-moss is stopped") || strings.Contains(got, "while it runs, taken when it changed") {
			t.Errorf("calm-moss is stopped, yet its timeline says: %s", got)
		}
		if strings.Contains(got, "boxsnap takes one while it runs, when it changed.") && !strings.Contains(got, "it is stopped") {
			t.Errorf("calm-moss is stopped, yet its timeline promises one while it runs without saying so: %s", got)
		}
	}
	// Settings says the same of the local backend's boxes, as the
	// automatic check last saw them.
	if _, err := s.env.Sweeps.CheckAutomatic(ctx); err != nil {
		t.Fatal(err)
	}
	settings := pageText(s.do(t, "GET", "/settings/snapshots/history", nil, nil).Body.String())
	if want := "1 box runs, checked every " + every; st.Running && !strings.Contains(settings, want) {
		t.Errorf("calm-moss runs, yet Settings does not say %q: %s", want, settings)
	}
	if want := "1 box is stopped, so none are taken until it runs"; !st.Running && !strings.Contains(settings, want) {
		t.Errorf("calm-moss is stopped, yet Settings does not say %q: %s", want, settings)
	}
	// Off for this box: no sentence promises a snapshot.
	if r := s.do(t, "POST", "/boxes/calm-moss/history", url.Values{"automatic": {"off"}}, nil); r.Code >= 400 {
		t.Fatalf("turn automatic snapshots off: %d %s", r.Code, r.Body.String())
	}
	got = timelineText(t, s, "calm-moss")
	if !strings.Contains(got, "automatic snapshots are off for calm-moss") || strings.Contains(got, "boxsnap takes one") ||
		strings.Contains(got, "checked every") || strings.Contains(got, "checks it every") {
		t.Errorf("automatic snapshots are off for calm-moss, yet its timeline says: %s", got)
	}
	settings = pageText(s.do(t, "GET", "/settings/snapshots/history", nil, nil).Body.String())
	if !strings.Contains(settings, "Now, as last checked: 1 box has them off.") {
		t.Errorf("automatic snapshots are off for calm-moss, yet Settings says: %s", settings)
	}
}

// derefS is *p, or "" for nil.
func derefS(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
