package web

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
)

var changesLine = regexp.MustCompile(`<p class="changes">([^<]*)<a href="([^"]*)"[^>]*>See the list</a></p>`)

// TestRequestsInNavigation: a request waiting for the person's word is
// seen from every page: Requests in the navigation, with its count; its
// card says what the restore changes, with the list, as the restore dialog
// does; the count goes when it is answered.
func TestRequestsInNavigation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSite(t, coretest.Options{NoWorkers: true})
	_, agent, _ := s.env.Thread(t, "Fix the sign-in flow")
	s.env.Box(t, agent, "amber-fox")
	op, sn, err := s.env.Take.Take(ctx, agent, take.TakeRequest{Box: "amber-fox", Name: "before the migration"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.env.Core.RunOperation(ctx, op.ID); err != nil {
		t.Fatal(err)
	}
	if body := s.do(t, "GET", "/boxes", nil, nil).Body.String(); !strings.Contains(body, `class="nav-requests"`) || strings.Contains(body, "waiting</span>") {
		t.Fatal("with none waiting, the navigation has no Requests, or counts one")
	}
	if w := s.do(t, "POST", "/settings/snapshots/switches", url.Values{"switches": {"1"}, "agentsMayRestoreMemory": {"1"}, "pictures": {"1"}}, nil); w.Code >= 400 {
		t.Fatalf("switching agents' restores off: %d", w.Code)
	}
	_, err = s.env.Restores.Restore(ctx, agent, snapshots.RestoreRequest{Box: "amber-fox", Snapshot: sn.ID, Replace: true})
	a, ok := approvals.AsAsked(err)
	if !ok {
		t.Fatalf("with the switch off the agent's restore: %v", err)
	}
	for _, page := range []string{"/boxes", "/boxes/snapshots", "/boxes/amber-fox", "/settings/snapshots", "/import"} {
		body := s.do(t, "GET", page, nil, nil).Body.String()
		if !strings.Contains(body, `<a href="/approvals" class="nav-requests" >Requests <span class="count" aria-label="1 waiting">1</span></a>`) {
			t.Errorf("%s's navigation does not show Requests 1", page)
		}
	}
	dialog := s.do(t, "GET", "/boxes/amber-fox/snapshots/"+sn.ID+"/restore", nil, nil).Body.String()
	want := changesLine.FindStringSubmatch(dialog)
	if want == nil {
		t.Fatalf("the restore dialog says no changes:\n%s", dialog)
	}
	card := s.do(t, "GET", "/approvals", nil, nil).Body.String()
	got := changesLine.FindStringSubmatch(card)
	if got == nil || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("the request's card says %q, the restore dialog %q", got, want)
	}
	if !strings.Contains(card, `aria-current="page">Requests`) {
		t.Error("on the Requests page, Requests is not the current item")
	}
	s.do(t, "POST", "/approvals/"+a.Approval.ID+"/decline", url.Values{"back": {"/approvals"}}, nil)
	if body := s.do(t, "GET", "/boxes", nil, nil).Body.String(); strings.Contains(body, "waiting</span>") {
		t.Error("a declined request is still counted")
	}
}
