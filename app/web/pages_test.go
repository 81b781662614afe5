package web

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
)

var planField = regexp.MustCompile(`name="plan" value="([0-9a-f]+)"`)

// TestStaleDialogRefuses: a restore dialog whose plan changed meanwhile (a
// terminal opened) restores nothing and shows the new plan.
func TestStaleDialogRefuses(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{})
	ctx := context.Background()
	b := s.env.Box(t, snapshots.Owner(), "amber-fox")
	op, sn, err := s.env.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: b.Name, Name: "before the migration"})
	if err != nil {
		t.Fatal(err)
	}
	s.env.Wait(t, op)
	path := "/boxes/amber-fox/snapshots/" + sn.ID + "/restore"
	w := s.do(t, "GET", path, nil, nil)
	m := planField.FindStringSubmatch(w.Body.String())
	if w.Code != http.StatusOK || m == nil {
		t.Fatalf("restore dialog: %d, plan field %v\n%s", w.Code, m, w.Body)
	}
	if _, err := s.env.Boxes.SetPresence(ctx, snapshots.Owner(), b.Name, snapshots.Presence{Terminals: 1}); err != nil {
		t.Fatal(err)
	}
	w = s.do(t, "POST", path, url.Values{"plan": {m[1]}, "undo": {"1"}, "back": {"/boxes/amber-fox"}}, nil)
	body := w.Body.String()
	if w.Code != http.StatusConflict || !strings.Contains(body, "This changed since the dialog opened") || !strings.Contains(body, "A terminal is open on it.") {
		t.Fatalf("a stale restore answered %d:\n%s", w.Code, body)
	}
	list, _ := s.env.Core.List(ctx, snapshots.Owner(), snapshots.ListQuery{Box: b.Name})
	if len(list[0].Snapshots) != 1 {
		t.Fatalf("a stale dialog acted: %d snapshots", len(list[0].Snapshots))
	}
	// The new plan's own fingerprint goes on, with "Restore anyway".
	m = planField.FindStringSubmatch(body)
	w = s.do(t, "POST", path, url.Values{"plan": {m[1]}, "undo": {"1"}, "back": {"/boxes/amber-fox"}}, nil)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/boxes/amber-fox" {
		t.Fatalf("the fresh dialog's restore answered %d %s:\n%s", w.Code, w.Header().Get("Location"), w.Body)
	}
}

// TestStateChangesArePostsFromThisSite: a POST from another site is refused
// before any handler, a GET changes nothing, and a signed-out POST is 401.
func TestStateChangesArePostsFromThisSite(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{NoWorkers: true})
	s.env.Box(t, snapshots.Owner(), "amber-fox")
	w := s.do(t, "POST", "/boxes/amber-fox/take", url.Values{"name": {"x"}}, map[string]string{"Sec-Fetch-Site": "cross-site"})
	if w.Code != http.StatusForbidden {
		t.Fatalf("a cross-site take answered %d", w.Code)
	}
	if w := s.do(t, "GET", "/boxes/amber-fox/take", nil, nil); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `role="alertdialog"`) {
		t.Fatalf("the take dialog's page answered %d", w.Code)
	}
	list, _ := s.env.Core.List(context.Background(), snapshots.Owner(), snapshots.ListQuery{Box: "amber-fox"})
	if len(list[0].Snapshots) != 0 {
		t.Fatal("a refused or GET request took a snapshot")
	}
	r := s.do(t, "POST", "/boxes/amber-fox/take", url.Values{"name": {"x"}}, nil)
	if r.Code != http.StatusSeeOther {
		t.Fatalf("the owner's take answered %d:\n%s", r.Code, r.Body)
	}
	s.session = "not-a-session"
	if w := s.do(t, "POST", "/boxes/amber-fox/take", url.Values{}, nil); w.Code != http.StatusUnauthorized {
		t.Fatalf("a signed-out take answered %d", w.Code)
	}
}

// TestFragmentsAndPages: one handler answers the whole page or the
// fragment htmx targets, with Vary: HX-Request; the tab keeps its query.
func TestFragmentsAndPages(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{})
	ctx := context.Background()
	b := s.env.Box(t, snapshots.Owner(), "amber-fox")
	op, _, err := s.env.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: b.Name, Name: "before the migration", Note: "schema v2"})
	if err != nil {
		t.Fatal(err)
	}
	s.env.Wait(t, op)
	full := s.do(t, "GET", "/boxes/snapshots?q=schema", nil, nil)
	if !strings.Contains(full.Body.String(), "<!doctype html>") || !strings.Contains(full.Body.String(), "before the migration") {
		t.Fatalf("the tab's page:\n%s", full.Body)
	}
	if !strings.Contains(full.Header().Get("Vary"), "HX-Request") {
		t.Fatal("no Vary: HX-Request")
	}
	part := s.do(t, "GET", "/boxes/snapshots?q=nothing-matches", nil, map[string]string{"HX-Request": "true", "HX-Target": "div#snapshot-results"})
	body := part.Body.String()
	if strings.Contains(body, "<html") || !strings.HasPrefix(strings.TrimSpace(body), `<div id="snapshot-results">`) || !strings.Contains(body, "No snapshots match") {
		t.Fatalf("the results fragment:\n%s", body)
	}
	// The picture: a snapshot with none reads as not found.
	list, _ := s.env.Core.List(ctx, snapshots.Owner(), snapshots.ListQuery{Box: b.Name})
	if w := s.do(t, "GET", "/pictures/"+list[0].Snapshots[0].ID, nil, nil); w.Code != http.StatusNotFound {
		t.Fatalf("a snapshot with no picture answered %d", w.Code)
	}
}

// TestEmptyTab: with no snapshots the tab says the specification's words.
func TestEmptyTab(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{NoWorkers: true})
	w := s.do(t, "GET", "/boxes/snapshots", nil, nil)
	if !strings.Contains(w.Body.String(), "No snapshots yet. An agent takes one before a risky change, or take one from a box's page.") {
		t.Fatalf("the empty tab:\n%s", w.Body)
	}
}

// TestSwitchesSaveAtOnce: a switch's change posts the switches' form and
// saves at once, answering its receipt alone to htmx; without script the
// form's own post saves and comes back to the page. Numbers stay drafts.
func TestSwitchesSaveAtOnce(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{NoWorkers: true})
	ctx := context.Background()
	// The index lists each section, a page one step in.
	index := s.do(t, "GET", "/settings/snapshots", nil, nil).Body.String()
	for _, sec := range []string{"each-box", "keep", "agents", "pictures", "paid", "backends"} {
		if !strings.Contains(index, `href="/settings/snapshots/`+sec+`"`) {
			t.Fatalf("the settings' index has no %s section:\n%s", sec, index)
		}
	}
	page := s.do(t, "GET", "/settings/snapshots/agents", nil, nil).Body.String()
	if !strings.Contains(page, `hx-post="/settings/snapshots/switches" hx-trigger="change"`) || !strings.Contains(page, `action="/settings/snapshots/switches"`) {
		t.Fatalf("the switches do not save on change, with a form behind them:\n%s", page)
	}
	// A page of switches has no Save: they saved when they changed.
	if strings.Contains(page, `<button type="submit">Save</button>`) || strings.Contains(page, `type="number"`) {
		t.Fatalf("the switches' page mixes in numbers saved with Save:\n%s", page)
	}
	// A page of numbers ends with its Save, and has no switch.
	for _, sec := range []string{"each-box", "keep", "history", "requests", "trash", "sharing", "paid"} {
		page := s.do(t, "GET", "/settings/snapshots/"+sec, nil, nil).Body.String()
		save := strings.Index(page, `<button type="submit">Save</button>`)
		if save < 0 || strings.LastIndex(page, `type="number"`) > save || strings.Contains(page, `type="checkbox"`) || strings.LastIndex(page, "<textarea") > save {
			t.Fatalf("%s: Save is not after every number it saves, or a switch is beside them:\n%s", sec, page)
		}
	}
	if w := s.do(t, "GET", "/settings/snapshots/nothing", nil, nil); w.Code != http.StatusNotFound {
		t.Fatalf("a section that is none answered %d", w.Code)
	}
	st, err := s.env.Core.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The form as the page has it, with one switch changed.
	form := func(agents, memory, pictures bool) url.Values {
		v := url.Values{"switches": {"1"}}
		for name, on := range map[string]bool{"agentsMayRestore": agents, "agentsMayRestoreMemory": memory, "pictures": pictures} {
			if on {
				v.Set(name, "1")
			}
		}
		return v
	}
	w := s.do(t, "POST", "/settings/snapshots/switches", form(!st.AgentsMayRestore, st.AgentsMayRestoreMemory, st.Pictures),
		map[string]string{"HX-Request": "true"})
	want := "Saved: Agents may restore their own boxes, on."
	if st.AgentsMayRestore {
		want = "Saved: Agents may restore their own boxes, off."
	}
	if w.Code != http.StatusOK || w.Body.String() != want {
		t.Fatalf("a switch's change answered %d %q, want %q", w.Code, w.Body, want)
	}
	after, err := s.env.Core.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.AgentsMayRestore == st.AgentsMayRestore || after.AgentsMayRestoreMemory != st.AgentsMayRestoreMemory || after.Pictures != st.Pictures {
		t.Fatalf("after the change: %+v, before %+v", after, st)
	}
	w = s.do(t, "POST", "/settings/snapshots/switches", form(after.AgentsMayRestore, after.AgentsMayRestoreMemory, !after.Pictures), nil)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/settings/snapshots" {
		t.Fatalf("the form's own post answered %d %s", w.Code, w.Header().Get("Location"))
	}
	got, _ := s.env.Core.Settings(ctx)
	if got.Pictures == after.Pictures || got.AgentsMayRestore != after.AgentsMayRestore {
		t.Fatalf("after the form's post: %+v", got)
	}
	// A section's page posts only its own switches: the others stay.
	pics := url.Values{"switches": {"1"}, "section": {"pictures"}, "shown": {"pictures"}}
	if !got.Pictures {
		pics.Set("pictures", "1")
	}
	w = s.do(t, "POST", "/settings/snapshots/switches", pics, nil)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/settings/snapshots/pictures" {
		t.Fatalf("the Pictures page's post answered %d %s", w.Code, w.Header().Get("Location"))
	}
	if last, _ := s.env.Core.Settings(ctx); last.Pictures == got.Pictures || last.AgentsMayRestore != got.AgentsMayRestore || last.AgentsMayRestoreMemory != got.AgentsMayRestoreMemory {
		t.Fatalf("the Pictures page's post changed what it does not show: %+v, before %+v", last, got)
	}
}

// TestSettingsSaved: Save keeps the numbers within their ranges, and says
// the range of one that is not.
func TestSettingsSaved(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{NoWorkers: true})
	before, err := s.env.Core.Settings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Save saves the numbers; switches sent with them are not its to save.
	form := url.Values{"perBox": {"7"}, "roomPercent": {"80"}, "keepDays": {"14"}, "agentsMayRestoreMemory": {"1"}}
	if w := s.do(t, "POST", "/settings/snapshots", form, nil); w.Code != http.StatusSeeOther {
		t.Fatalf("Save answered %d:\n%s", w.Code, w.Body)
	}
	st, err := s.env.Core.Settings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.PerBox != 7 || st.RoomPercent != 80 || st.KeepDays != 14 || st.Pictures != before.Pictures ||
		st.AgentsMayRestore != before.AgentsMayRestore || st.AgentsMayRestoreMemory != before.AgentsMayRestoreMemory {
		t.Fatalf("saved settings: %+v", st)
	}
	form.Set("perBox", "51")
	w := s.do(t, "POST", "/settings/snapshots", form, nil)
	if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "Snapshots per box is 1 to 50.") {
		t.Fatalf("an out-of-range Save answered %d:\n%s", w.Code, w.Body)
	}
	if w := s.do(t, "GET", "/settings/snapshots", nil, nil); !strings.Contains(w.Body.String(), "7 per box · kept 14 days") {
		t.Fatalf("the page does not sum up the settings:\n%s", w.Body)
	}
}

// TestTokensInInstallTimeZone: the tokens page says its times in the
// install's time zone, as every other page, never in UTC.
func TestTokensInInstallTimeZone(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{NoWorkers: true})
	ctx := context.Background()
	if _, err := s.env.Pool.Exec(ctx, `UPDATE owner SET time_zone = 'Asia/Kolkata'`); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.env.Auth.CreateAPIToken(ctx, "laptop CLI"); err != nil {
		t.Fatal(err)
	}
	list, err := s.env.Auth.ListAPITokens(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("tokens %v: %v", list, err)
	}
	loc, err := time.LoadLocation("Asia/Kolkata") // time/tzdata is linked in: never missing
	if err != nil {
		t.Fatal(err)
	}
	page := s.do(t, "GET", "/settings/tokens", nil, nil).Body.String()
	made := list[0].CreatedAt.In(loc).Format("15:04")
	if strings.Contains(page, "UTC") || !strings.Contains(page, "<td>Today "+made+"</td><td>never</td>") {
		t.Fatalf("the token's times are not in the install's time zone (made %s there):\n%s", made, page)
	}
}

// TestHistorySaysMadeOnce: a box's History card says how it was made once,
// in plain words ("Made on this host"), not "Made: made on this host".
func TestHistorySaysMadeOnce(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{NoWorkers: true})
	s.env.Box(t, snapshots.Owner(), "calm-moss")
	page := s.do(t, "GET", "/boxes/calm-moss", nil, nil).Body.String()
	if !strings.Contains(page, `<span class="what">Made on this host</span> <span class="muted">`) || strings.Contains(page, "made on this host") {
		t.Fatalf("the History card does not say “Made on this host” once:\n%s", page)
	}
}

// TestEventsSaidByTheCore: the box page's History card and a settled
// card's live region say each box log event as pagemodel's EventParts and
// EventLine say it (its kind's words, then the core's words after it), so
// an event's words are written once.
func TestEventsSaidByTheCore(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{})
	ctx := context.Background()
	b := s.env.Box(t, snapshots.Owner(), "calm-moss")
	op, sn, err := s.env.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: b.Name, Name: "before the migration"})
	if err != nil {
		t.Fatal(err)
	}
	s.env.Wait(t, op)
	op, err = s.env.Keeps.Keep(ctx, snapshots.Owner(), snapshots.KeepRequest{Box: b.Name, Snapshot: sn.ID, Days: 3})
	if err != nil {
		t.Fatal(err)
	}
	s.env.Wait(t, op)
	evs, err := s.env.Boxes.BoxLog(ctx, snapshots.Owner(), b.ID, 10)
	if err != nil || len(evs) < 3 {
		t.Fatalf("the box log holds %d events (%v)", len(evs), err)
	}
	page := s.do(t, "GET", "/boxes/calm-moss", nil, nil).Body.String()
	for _, ev := range evs {
		what, words := pagemodel.EventParts(ev)
		line := `<span class="what">` + html.EscapeString(what) + `</span>`
		if words != "" {
			line += ": " + html.EscapeString(words)
		}
		if !strings.Contains(page, line) {
			t.Errorf("the History card does not say %s event as the core does, %q:\n%s", ev.Kind, line, page)
		}
	}
	live := s.do(t, "GET", "/boxes/calm-moss/live?in=page", nil, nil).Body.String()
	if want := `data-announce="` + html.EscapeString(pagemodel.EventLine(b.Name, evs[0])) + `"`; !strings.Contains(live, want) {
		t.Errorf("the settled card does not announce the newest event as the core says it, %s:\n%s", want, live)
	}
}
