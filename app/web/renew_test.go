package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/keep"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
)

// TestKeepRenewal: "Keep 30 more days" renews a kept snapshot:
// on its row and the box card, beside "goes in 3 days", in its menu, and in
// bulk; it adds the setting's days to the keep date, never shortens it, is
// the person's alone, and past the paid ceiling says the ceiling's words
// where Keep would.
func TestKeepRenewal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSite(t, coretest.Options{Price: &providers.Price{Amount: 0.06, Currency: "USD", Per: "day", Known: true}})
	_, agent, _ := s.env.Thread(t, "Keep the migration")
	s.env.Box(t, agent, "amber-fox")
	op, sn, err := s.env.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: "amber-fox", Name: "before the migration"})
	if err != nil {
		t.Fatal(err)
	}
	s.env.Wait(t, op)
	op, other, err := s.env.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: "amber-fox", Name: "not kept"})
	if err != nil {
		t.Fatal(err)
	}
	s.env.Wait(t, op)

	// Not kept: nothing to renew.
	_, err = s.env.Keeps.Renew(ctx, snapshots.Owner(), snapshots.KeepRequest{Box: "amber-fox", Snapshot: other.ID})
	if r, ok := snapshots.AsRefusal(err); !ok || r.Words != "‘not kept’ is not kept: Keep it first." {
		t.Fatalf("renewing what is not kept: %v", err)
	}
	// Kept until tomorrow: its row says it goes, and offers 30 more days.
	tomorrow := time.Now().UTC().AddDate(0, 0, 1)
	op, err = s.env.Keeps.Keep(ctx, snapshots.Owner(), snapshots.KeepRequest{Box: "amber-fox", Snapshot: sn.ID, Until: &tomorrow})
	if err != nil {
		t.Fatal(err)
	}
	s.env.Wait(t, op)
	_, err = s.env.Keeps.Renew(ctx, agent, snapshots.KeepRequest{Box: "amber-fox", Snapshot: sn.ID})
	if r, ok := snapshots.AsRefusal(err); !ok || r.Words != "Only the person can keep a snapshot." {
		t.Fatalf("an agent's renewal: %v", err)
	}
	renew := "/boxes/amber-fox/snapshots/" + sn.ID + "/renew"
	for _, page := range []string{"/boxes/amber-fox", "/boxes/snapshots"} {
		w := s.do(t, "GET", page, nil, nil)
		body := w.Body.String()
		if !strings.Contains(body, "goes tomorrow") && !strings.Contains(body, "goes in 2 days") {
			t.Fatalf("%s does not say it goes soon", page)
		}
		for _, want := range []string{`id="renew-` + sn.ID + `"`, `action="` + renew + `"`, ">Keep 30 more days</button>", "Keep 30 more days for before the migration"} {
			if !strings.Contains(body, want) {
				t.Fatalf("%s does not show %q", page, want)
			}
		}
	}
	w := s.do(t, "POST", renew, url.Values{"back": {"/boxes/amber-fox"}}, nil)
	if w.Code != http.StatusSeeOther {
		t.Fatalf("Keep 30 more days answered %d:\n%s", w.Code, w.Body)
	}
	waitIdle(t, s, "amber-fox")
	got, _, _ := s.env.Core.Snapshot(ctx, snapshots.Owner(), sn.ID)
	if want := keep.EndOfUTCDay(tomorrow.AddDate(0, 0, 30)); got.KeptUntil == nil || !got.KeptUntil.Equal(want) {
		t.Fatalf("kept until %v after Keep 30 more days, want %v", got.KeptUntil, want)
	}
	// In bulk: the kept one is renewed, the other skipped, with why.
	w = s.do(t, "GET", "/boxes/snapshots/bulk?action=renew&id="+sn.ID+"&id="+other.ID, nil, nil)
	body := w.Body.String()
	for _, want := range []string{"Keep 30 more days for 1 snapshot?", "‘not kept’ is not kept: Keep it first."} {
		if !strings.Contains(body, want) {
			t.Fatalf("the bulk dialog does not say %q:\n%s", want, body)
		}
	}
	m := planField.FindStringSubmatch(body)
	w = s.do(t, "POST", "/boxes/snapshots/bulk", url.Values{"action": {"renew"}, "id": {sn.ID, other.ID}, "plan": {m[1]}, "back": {"/boxes/snapshots"}}, nil)
	if w.Code != http.StatusSeeOther {
		t.Fatalf("bulk renew answered %d:\n%s", w.Code, w.Body)
	}
	waitIdle(t, s, "amber-fox")
	got, _, _ = s.env.Core.Snapshot(ctx, snapshots.Owner(), sn.ID)
	if want := keep.EndOfUTCDay(tomorrow.AddDate(0, 0, 60)); !got.KeptUntil.Equal(want) {
		t.Fatalf("kept until %v after a bulk renewal, want %v", got.KeptUntil, want)
	}

	// Past the ceiling: the row, the menu and bulk say the ceiling's words
	// instead, and the renewal is refused in them.
	st, _ := s.env.Core.Settings(ctx)
	st.Ceilings = map[string]float64{"local": 1}
	if err := s.env.Core.SaveSettings(ctx, snapshots.Owner(), st); err != nil {
		t.Fatal(err)
	}
	words := "It would bring snapshots held on this host to about $3.60 a month, past your ceiling of $1.00. Delete one, or raise the ceiling in Settings, Snapshots, Paid snapshots."
	body = s.do(t, "GET", "/boxes/amber-fox", nil, nil).Body.String()
	if strings.Contains(body, `id="renew-`+sn.ID+`"`) || !strings.Contains(body, words) {
		t.Fatalf("past the ceiling the box card still offers the renewal, or not the words")
	}
	body = s.do(t, "GET", "/boxes/snapshots/bulk?action=renew&id="+sn.ID, nil, nil).Body.String()
	if !strings.Contains(body, "‘before the migration’ on amber-fox: "+words) {
		t.Fatalf("bulk renewal past the ceiling does not say why:\n%s", body)
	}
	body = s.do(t, "GET", "/boxes/snapshots", nil, nil).Body.String()
	if !strings.Contains(body, "Snapshots held on this host are about $3.60 a month, past your ceiling of $1.00") {
		t.Fatalf("the tab does not warn past the ceiling")
	}
	w = s.do(t, "POST", renew, url.Values{"back": {"/boxes/amber-fox"}}, nil)
	if w.Code == http.StatusSeeOther || !strings.Contains(w.Body.String(), words) {
		t.Fatalf("a renewal past the ceiling answered %d:\n%s", w.Code, w.Body)
	}
}

// waitIdle waits for the box's running operation, if any, to end.
func waitIdle(t *testing.T, s *site, box string) {
	t.Helper()
	var id string
	err := s.env.Pool.QueryRow(context.Background(),
		"SELECT o.id FROM operations o JOIN boxes b ON b.id = o.box_id WHERE b.name = $1 AND o.state = 'running' ORDER BY o.seq DESC LIMIT 1", box).Scan(&id)
	if err != nil {
		return // none runs
	}
	s.env.Wait(t, &snapshots.Operation{ID: id})
}
