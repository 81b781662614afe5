package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// TestAskedRestorePolledOverMCPAndJSON: an agent's restore that asks the
// person (its own box, "Agents may restore their own boxes" off) answers,
// over MCP as a result that is not an error, the request's ID and the
// state box_operation answers for it, needs input; its retry by the same
// key, as JSON, answers that same request and asks nothing again; the
// request polls to its end alike over MCP and JSON: needs input while it
// waits, then the restore the approval started, done.
func TestAskedRestorePolledOverMCPAndJSON(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newMCPFixture(t)
	f.SetSettings(t, func(st *snapshots.Settings) { st.AgentsMayRestore = false })

	args := map[string]any{"box": "amber-fox", "snapshot": "before the migration", "replace": true, "request": "ask-1"}
	asked, text, isErr := f.callMCP(t, "box_restore", args)
	if isErr {
		t.Fatalf("box_restore over MCP refused: %s", text)
	}
	id, _ := asked["request"].(string)
	if !strings.HasPrefix(id, "ap") || asked["state"] != "needs input" {
		t.Fatalf("the asked restore over MCP answered %s, want a request's ID and state \"needs input\", as box_operation says it", text)
	}
	contains(t, text, "Poll it with box_operation (operation "+id)

	// The retry after a lost answer is the same request: nothing asked
	// again.
	again := f.call(t, "POST", "/tools/box_restore", f.token, args).must(t, 202)
	if again.str("request") != id || again.str("state") != "needs input" {
		t.Fatalf("the retry as JSON answered %s, the first %s", again.Raw, text)
	}
	if waiting, err := f.Approvals.List(ctx, snapshots.Owner(), ""); err != nil || len(waiting) != 1 {
		t.Fatalf("after the retry %d requests wait for the person (%v), want 1", len(waiting), err)
	}

	// Polled while it waits: needs input, over MCP and JSON alike.
	polled, text, isErr := f.callMCP(t, "box_operation", map[string]any{"operation": id})
	if isErr || polled["state"] != "needs input" || polled["request"] != id {
		t.Fatalf("box_operation over MCP on the waiting request: %s", text)
	}
	j := f.call(t, "POST", "/tools/box_operation", f.token, map[string]any{"operation": id}).must(t, 200)
	if j.str("state") != "needs input" || j.str("request") != id {
		t.Fatalf("box_operation as JSON on the waiting request: %s", j.Raw)
	}

	// Approved: the poll, waiting, follows the restore to its end.
	started := f.call(t, "POST", "/approvals/"+id+"/approve", f.owner, nil).must(t, 202)
	restoreID := started.opID()
	polled, text, isErr = f.callMCP(t, "box_operation", map[string]any{"operation": id, "wait": 60})
	op, _ := polled["operation"].(map[string]any)
	if isErr || polled["state"] != snapshots.OpDone || polled["request"] != id || op == nil || op["id"] != restoreID || op["kind"] != snapshots.OpRestore {
		t.Fatalf("box_operation over MCP after the approval: %s (the restore %s)", text, restoreID)
	}
	j = f.call(t, "POST", "/tools/box_operation", f.token, map[string]any{"operation": id, "wait": 60}).must(t, 200)
	if j.str("state") != snapshots.OpDone || j.str("request") != id || j.opID() != restoreID || j.str("message") != polled["message"] {
		t.Fatalf("box_operation as JSON after the approval: %s; over MCP %s", j.Raw, text)
	}
	if got := f.notes(t); got != "the first notes" {
		t.Fatalf("after the approved restore amber-fox's notes say %q, want the snapshot's", got)
	}
}

// TestLongToolsSayHowToPoll: over MCP, where an agent reads no status,
// each tool that waits for an operation says in its description how to
// poll it to its end when it answers first, and box_restore what it
// answers when it asks the person: no error, the request's ID, the state
// needs input, and how that polls to its end.
func TestLongToolsSayHowToPoll(t *testing.T) {
	t.Parallel()
	f := newMCPFixture(t)
	listed, err := f.ses.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	long := map[string]bool{"box_snapshot": false, "box_restore": false, "box_fork": false, "box_snapshot_delete": false,
		"box_reset": false, "box_undo": false, "box_trash_restore": false, "box_release": false}
	for _, tl := range listed.Tools {
		if _, ok := long[tl.Name]; !ok {
			continue
		}
		long[tl.Name] = true
		contains(t, tl.Description, "a result that is not an error", "operation.id is the operation's ID",
			"poll it with box_operation (operation: that ID; wait: up to 60 seconds a call) until its state is done, failed or unknown")
		if tl.Name == "box_restore" {
			contains(t, tl.Description, "request the request's ID and state needs input",
				"box_operation with operation: the request's ID answers needs input", "declined or expired",
				"the same request answers the same request")
		}
	}
	for name, seen := range long {
		if !seen {
			t.Errorf("%s is not on MCP", name)
		}
	}
}
