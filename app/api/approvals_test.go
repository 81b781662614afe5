package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
)

// TestApprovalsThroughTheAPI: box_restore on a box threads run on, with
// the switch on, answers 202 that it asked, with the request's ID; while
// the request waits, the tools of the threads on that box answer
// try_again; the person lists the request with its plan and approves it
// (the agent cannot); the asking agent's next call carries the answer.
func TestApprovalsThroughTheAPI(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := setupWith(t, coretest.Options{})
	token, agent := e.agent(t, "Fix the sign-in flow")
	b := e.Box(t, snapshots.Owner(), "dev-desk")
	if _, err := e.Boxes.SetPresence(ctx, snapshots.Owner(), b.ID, snapshots.Presence{Workspaces: []snapshots.Workspace{{Thread: agent.Thread, RunsOn: true}}}); err != nil {
		t.Fatal(err)
	}
	a := e.call(t, "POST", "/tools/box_snapshot", token, map[string]any{"box": "dev-desk", "name": "before the upgrade"}).must(t, 200)
	sn := a.str("snapshot")
	if sn == "" {
		t.Fatalf("box_snapshot: %s", a.Raw)
	}
	st, _ := e.Core.Settings(ctx)
	st.ExecutionMachineRestores = true
	if err := e.Core.SaveSettings(ctx, snapshots.Owner(), st); err != nil {
		t.Fatal(err)
	}
	a = e.call(t, "POST", "/tools/box_restore", token, map[string]any{"box": "dev-desk", "snapshot": sn, "replace": true}).must(t, 202)
	id := a.str("request")
	contains(t, a.str("message"), "You asked the person to restore dev-desk to ‘before the upgrade’ (request "+id+").",
		"End your turn now: nothing you do on dev-desk after this survives the restore.")

	// The turn hold: the thread's tools answer try_again while it waits.
	a = e.call(t, "POST", "/tools/box_snapshots", token, map[string]any{}).must(t, 409)
	if !strings.Contains(string(a.Raw), approvals.HeldWords("dev-desk")) || !strings.Contains(string(a.Raw), `"try_again":true`) {
		t.Fatalf("a held thread's tool: %s", a.Raw)
	}

	// Only the person answers.
	e.call(t, "POST", "/approvals/"+id+"/approve", token, nil).must(t, 403)
	a = e.call(t, "GET", "/approvals", e.owner, nil).must(t, 200)
	if !strings.Contains(string(a.Raw), id) || !strings.Contains(string(a.Raw), "An undo of dev-desk is taken first; it cannot be left out.") {
		t.Fatalf("the requests: %s", a.Raw)
	}
	a = e.call(t, "POST", "/approvals/"+id+"/approve?wait=true", e.owner, nil).must(t, 200)
	a = e.call(t, "POST", "/tools/box_snapshots", token, map[string]any{}).must(t, 200)
	contains(t, string(a.Raw), `"requests":["The person approved your request `+id)
	// openapi.json says the field a tool's answer carries.
	doc := readOpenAPI(t, e)
	var v any
	if err := json.Unmarshal(a.Raw, &v); err != nil {
		t.Fatal(err)
	}
	if err := validate(doc, doc.Components.Schemas["SnapshotsAnswer"], v, "SnapshotsAnswer"); err != nil {
		t.Errorf("a tool's answer with its requests: %v", err)
	}
}
