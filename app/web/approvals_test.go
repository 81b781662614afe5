package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
)

// TestApprovalsOnThePages: a request for the person's word shows on the
// box's page, on the Snapshots tab's line and on the Requests page, each
// with its plan; Decline and Approve answer it from there; Settings has
// the switch for restores of boxes threads run on, off by default, and the
// request's minutes.
func TestApprovalsOnThePages(t *testing.T) {
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
	body := s.do(t, "GET", "/settings/snapshots/agents", nil, nil).Body.String() + s.do(t, "GET", "/settings/snapshots/requests", nil, nil).Body.String()
	if !strings.Contains(body, `name="executionMachineRestores" value="1" aria-describedby="exec-h"> Restores of boxes threads run on`) ||
		!strings.Contains(body, `name="approvalMinutes" type="number" min="1" max="1440" value="30"`) {
		t.Fatal("Settings lacks the switch (off) or the request's minutes")
	}
	w := s.do(t, "POST", "/settings/snapshots/switches", url.Values{"switches": {"1"}, "agentsMayRestoreMemory": {"1"}, "pictures": {"1"}}, nil)
	if w.Code >= 400 {
		t.Fatalf("switching agents' restores off: %d", w.Code)
	}
	_, err = s.env.Restores.Restore(ctx, agent, snapshots.RestoreRequest{Box: "amber-fox", Snapshot: sn.ID, Replace: true})
	a, ok := approvals.AsAsked(err)
	if !ok {
		t.Fatalf("with the switch off the agent's restore: %v", err)
	}
	id := a.Approval.ID
	asks := "Fix the sign-in flow asks to restore amber-fox to ‘before the migration’."
	for _, page := range []string{"/boxes/amber-fox", "/approvals"} {
		body := s.do(t, "GET", page, nil, nil).Body.String()
		for _, want := range []string{asks, "An undo of amber-fox is taken first; it cannot be left out.", `action="/approvals/` + id + `/approve"`, `action="/approvals/` + id + `/decline"`} {
			if !strings.Contains(body, want) {
				t.Fatalf("%s does not show %q", page, want)
			}
		}
	}
	if body := s.do(t, "GET", "/boxes/snapshots", nil, nil).Body.String(); !strings.Contains(body, "1 request waits for your word") {
		t.Fatal("the tab's line does not count the request")
	}
	w = s.do(t, "POST", "/approvals/"+id+"/decline", url.Values{"back": {"/approvals"}}, nil)
	if w.Code != http.StatusSeeOther {
		t.Fatalf("Decline answered %d: %s", w.Code, w.Body)
	}
	if body := s.do(t, "GET", "/approvals", nil, nil).Body.String(); !strings.Contains(body, "No requests wait for your word.") {
		t.Fatal("a declined request still waits")
	}
	_, err = s.env.Restores.Restore(ctx, agent, snapshots.RestoreRequest{Box: "amber-fox", Snapshot: sn.ID, Replace: true})
	a, _ = approvals.AsAsked(err)
	w = s.do(t, "POST", "/approvals/"+a.Approval.ID+"/approve", url.Values{"back": {"/boxes/amber-fox"}}, nil)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/boxes/amber-fox" {
		t.Fatalf("Approve answered %d: %s", w.Code, w.Body)
	}
	got, _ := s.env.Approvals.Get(ctx, snapshots.Owner(), a.Approval.ID)
	if got.State != approvals.ApprovalApproved || got.Operation == nil {
		t.Fatalf("after Approve: %+v", got)
	}
}
