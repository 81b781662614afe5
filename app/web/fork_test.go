package web

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
)

var requestField = regexp.MustCompile(`name="request" value="([^"]+)"`)

// TestForkOpensTheNewBoxsPage: Fork's dialog says what a fork is in the
// specification's words; Fork opens the new box's page, starting, and once
// made its facts say where it came from.
func TestForkOpensTheNewBoxsPage(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{})
	ctx := context.Background()
	th, _, _ := s.env.Thread(t, "Fix the sign-in flow")
	b, err := s.env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "amber-fox", Backend: "local", Thread: th.ID})
	if err != nil {
		t.Fatal(err)
	}
	op, sn, err := s.env.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: b.Name, Name: "before the migration"})
	if err != nil {
		t.Fatal(err)
	}
	s.env.Wait(t, op)
	// The row offers Fork, enabled, in its icons and its menu.
	w := s.do(t, "GET", "/boxes/amber-fox", nil, nil)
	if !strings.Contains(w.Body.String(), `id="fork-`+sn.ID+`"`) || !strings.Contains(w.Body.String(), `aria-label="Fork amber-fox from before the migration…"`) {
		t.Fatalf("the row has no enabled Fork:\n%s", w.Body)
	}
	path := "/boxes/amber-fox/snapshots/" + sn.ID + "/fork"
	w = s.do(t, "GET", path, nil, nil)
	body := html.UnescapeString(w.Body.String())
	for _, want := range []string{
		"Fork amber-fox from ‘before the migration’",
		"A new box with amber-fox's files as they were at " + sn.TakenAt.In(s.env.Core.TimeZone(ctx)).Format("15:04") +
			". It gets its own identity and keys, and never acts as amber-fox. Everything else on its disk comes with it: project secrets, signed-in browsers and keychains. It starts fresh: no apps are running.",
		"In Fix the sign-in flow, as amber-fox is", "As one of your machines", `placeholder="amber-fox-fork"`, "Its size: as the snapshot",
	} {
		if !strings.Contains(body, want) {
			t.Fatalf("the fork dialog does not say %q:\n%s", want, body)
		}
	}
	plan, req := planField.FindStringSubmatch(body), requestField.FindStringSubmatch(body)
	w = s.do(t, "POST", path, url.Values{"plan": {plan[1]}, "request": {req[1]}, "name": {"amber-fork"}, "where": {"machine"}, "back": {"/boxes/amber-fox"}}, nil)
	loc := w.Header().Get("Location")
	if w.Code != http.StatusSeeOther || !strings.HasPrefix(loc, "/boxes/amber-fork?fork=") {
		t.Fatalf("Fork answered %d %q:\n%s", w.Code, loc, w.Body)
	}
	u, _ := url.Parse(loc)
	forkOp, err := s.env.Core.Operation(ctx, snapshots.Owner(), u.Query().Get("fork"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.env.Wait(t, forkOp); got.State != snapshots.OpDone {
		t.Fatalf("the fork ended %s: %v", got.State, got.Error)
	}
	w = s.do(t, "GET", loc, nil, nil)
	tz := s.env.Core.TimeZone(ctx)
	want := "Forked from amber-fox, ‘before the migration’ (today " + sn.TakenAt.In(tz).Format("15:04") + ")"
	if w.Code != http.StatusOK || !strings.Contains(html.UnescapeString(w.Body.String()), want) || !strings.Contains(w.Body.String(), "Your machine") {
		t.Fatalf("the new box's page (%d) does not say %q and Your machine:\n%s", w.Code, want, w.Body)
	}
	// The live fragment of a fork that ended sends the page on to the box's.
	w = s.do(t, "GET", "/boxes/amber-fork/live?fork="+forkOp.ID, nil, map[string]string{"HX-Request": "true"})
	if !strings.Contains(w.Body.String(), `data-goto="/boxes/amber-fork"`) {
		t.Fatalf("the fork's live fragment, once done:\n%s", w.Body)
	}
}

// TestForkRefusedWithWhy: a snapshot taken before the box's image had the
// identity reset neither forks from its row nor from its dialog.
func TestForkRefusedWithWhy(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{})
	ctx := context.Background()
	b := s.env.Box(t, snapshots.Owner(), "brisk-lake")
	op, sn, err := s.env.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: b.Name, Name: "old image"})
	if err != nil {
		t.Fatal(err)
	}
	s.env.Wait(t, op)
	if _, err := s.env.Pool.Exec(ctx, `UPDATE snapshots SET fork_safe = NULL WHERE id = $1`, sn.ID); err != nil {
		t.Fatal(err)
	}
	why := providers.NoResetWords("brisk-lake")
	w := s.do(t, "GET", "/boxes/brisk-lake", nil, nil)
	if !strings.Contains(html.UnescapeString(w.Body.String()), `aria-label="Fork brisk-lake from old image: `+why+`"`) {
		t.Fatalf("the row's Fork is not disabled with why:\n%s", w.Body)
	}
	// Its dialog refuses too, and so does a post of it.
	w = s.do(t, "GET", "/boxes/brisk-lake/snapshots/"+sn.ID+"/fork", nil, nil)
	if body := html.UnescapeString(w.Body.String()); !strings.Contains(body, why) || strings.Contains(body, `data-submit="Fork"`) {
		t.Fatalf("the fork dialog of a snapshot without the reset:\n%s", body)
	}
	w = s.do(t, "POST", "/boxes/brisk-lake/snapshots/"+sn.ID+"/fork", url.Values{"name": {"brisk-copy"}}, nil)
	if w.Code != http.StatusConflict {
		t.Fatalf("a post of Fork for a snapshot without the reset answered %d", w.Code)
	}
	if _, err := s.env.Core.Box(ctx, snapshots.Owner(), "brisk-copy"); err == nil {
		t.Fatal("a snapshot without the reset was forked")
	}
}

// TestCheckNowSettles: a restore boxsnap could not confirm shows its notice
// with Check now on the box's page, and Check now settles it.
func TestCheckNowSettles(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{})
	ctx := context.Background()
	b := s.env.Box(t, snapshots.Owner(), "amber-fox")
	op, sn, err := s.env.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: b.Name, Name: "before the migration"})
	if err != nil {
		t.Fatal(err)
	}
	s.env.Wait(t, op)
	rop, err := s.env.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: b.Name, Snapshot: sn.ID, NoUndo: true})
	if err != nil {
		t.Fatal(err)
	}
	s.env.Wait(t, rop)
	// As a restart would leave it: unknown, at the rollback.
	if _, err := s.env.Pool.Exec(ctx, `UPDATE operations SET state = 'unknown', step = 'rollback', observed = 'the guest was stopped' WHERE id = $1`, rop.ID); err != nil {
		t.Fatal(err)
	}
	w := s.do(t, "GET", "/boxes/amber-fox", nil, nil)
	body := html.UnescapeString(w.Body.String())
	want := "boxsnap could not confirm the restore of amber-fox: it was rolling back when boxsnap restarted (the guest was stopped)."
	if !strings.Contains(body, want) || !strings.Contains(body, `action="/operations/`+rop.ID+`/check"`) || !strings.Contains(body, "Check now") {
		t.Fatalf("the box's page has no notice %q with Check now:\n%s", want, body)
	}
	w = s.do(t, "POST", "/operations/"+rop.ID+"/check", url.Values{"back": {"/boxes/amber-fox"}}, nil)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/boxes/amber-fox" {
		t.Fatalf("Check now answered %d %s:\n%s", w.Code, w.Header().Get("Location"), w.Body)
	}
	got, err := s.env.Core.Operation(ctx, snapshots.Owner(), rop.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State == snapshots.OpUnknown || got.State == snapshots.OpRunning {
		got = s.env.Wait(t, got)
	}
	if got.State == snapshots.OpUnknown {
		t.Fatalf("Check now left the restore unknown: %v", got.Observed)
	}
	if w := s.do(t, "GET", "/boxes/amber-fox", nil, nil); strings.Contains(w.Body.String(), "could not confirm") {
		t.Fatalf("the notice stays after Check now settled it (%s):\n%s", got.State, w.Body)
	}
}
