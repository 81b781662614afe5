package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// TestWaitAndPoll: a long operation is polled with box_operation by its
// ID. An agent's restore that would ask the person says so in its dry run,
// asking nothing; asked, it answers its request's ID and
// how to poll it; polled, it needs input while it waits for their word
// (the thread's turns are held, and the poll still answers); another
// thread's poll of it reads like a made-up ID; a poll waiting across the
// person's approval returns when the restore it started ends, done.
func TestWaitAndPoll(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	held := &heldRestore{entered: make(chan struct{}), let: make(chan struct{})}
	e := setupWith(t, coretest.Options{Wrap: func(b snapshots.Backend) snapshots.Backend {
		held.Backend = b.Snap
		b.Snap = held
		return b
	}})
	token, agent := e.agent(t, "Fix the sign-in flow")
	other, _ := e.agent(t, "Another thread")
	b := e.Box(t, snapshots.Owner(), "dev-desk")
	if _, err := e.Boxes.SetPresence(ctx, snapshots.Owner(), b.ID, snapshots.Presence{Workspaces: []snapshots.Workspace{{Thread: agent.Thread, RunsOn: true}}}); err != nil {
		t.Fatal(err)
	}
	take := e.call(t, "POST", "/tools/box_snapshot", token, map[string]any{"box": "dev-desk", "name": "before the upgrade"}).must(t, 200)
	// A done operation answers done at once, with what it did.
	a := e.call(t, "POST", "/tools/box_operation", token, map[string]any{"operation": take.str("operation")}).must(t, 200)
	if a.str("state") != snapshots.OpDone || !strings.HasPrefix(a.str("message"), "Took ‘before the upgrade’") {
		t.Fatalf("box_operation on a done take: %s", a.Raw)
	}
	st, _ := e.Core.Settings(ctx)
	st.ExecutionMachineRestores = true
	if err := e.Core.SaveSettings(ctx, snapshots.Owner(), st); err != nil {
		t.Fatal(err)
	}
	// Its dry run says it would ask, and asks nothing.
	a = e.call(t, "POST", "/tools/box_restore", token, map[string]any{"box": "dev-desk", "snapshot": "before the upgrade", "dry_run": true}).must(t, 200)
	if a.JSON["asksFirst"] != true || !strings.HasPrefix(a.str("message"), "This restore would first ask the person") {
		t.Fatalf("the dry run of a restore that asks: %s", a.Raw)
	}
	if asked, err := e.Approvals.List(ctx, snapshots.Owner(), ""); err != nil || len(asked) != 0 {
		t.Fatalf("a dry run asked the person: %v %v", asked, err)
	}
	a = e.call(t, "POST", "/tools/box_restore", token, map[string]any{"box": "dev-desk", "snapshot": "before the upgrade", "replace": true}).must(t, 202)
	id := a.str("request")
	contains(t, a.str("message"), "Poll it with box_operation (operation "+id+", and wait: seconds to wait for its end, at most 60)")

	// Waiting for the person's word: needs input, now and after a wait.
	for _, wait := range []int{0, 1} {
		a = e.call(t, "POST", "/tools/box_operation", token, map[string]any{"operation": id, "wait": wait}).must(t, 200)
		if a.str("state") != "needs input" || a.str("request") != id || a.JSON["operation"] != nil {
			t.Fatalf("box_operation on a request waiting for the person (wait %d): %s", wait, a.Raw)
		}
		contains(t, a.str("message"), "Request "+id+" needs input: it waits for the person's word on restoring dev-desk to ‘before the upgrade’.")
	}
	// Another thread's poll reads as a made-up request; a wait past the
	// bound is refused in words.
	made := "ap" + strings.Repeat("z", 12)
	mine := e.call(t, "POST", "/tools/box_operation", other, map[string]any{"operation": id}).must(t, 404)
	none := e.call(t, "POST", "/tools/box_operation", other, map[string]any{"operation": made}).must(t, 404)
	if strings.ReplaceAll(mine.errorWords(), id, made) != none.errorWords() {
		t.Fatalf("another thread's request reads %q; a made-up one %q", mine.errorWords(), none.errorWords())
	}
	bad := e.call(t, "POST", "/tools/box_operation", token, map[string]any{"operation": id, "wait": 61}).must(t, 400)
	contains(t, bad.errorWords(), "wait is a number of seconds from 0 to 60.")

	// A poll that waits across the approval returns when the restore ends,
	// not before: the restore is held at its first step until let go.
	held.hold.Store(true)
	t.Cleanup(func() {
		select {
		case <-held.let:
		default:
			close(held.let) // a failed test lets its held restore go
		}
	})
	polled := make(chan answer, 1)
	go func() { polled <- e.post(token, "/tools/box_operation", map[string]any{"operation": id, "wait": 60}) }()
	started := e.call(t, "POST", "/approvals/"+id+"/approve", e.owner, nil).must(t, 202)
	select {
	case <-held.entered:
	case <-time.After(time.Minute):
		t.Fatal("the approved restore never ran")
	}
	opID := started.JSON["operation"].(map[string]any)["id"].(string)
	a = e.call(t, "POST", "/tools/box_operation", token, map[string]any{"operation": opID, "wait": 1}).must(t, 200)
	if a.str("state") != snapshots.OpRunning {
		t.Fatalf("box_operation on a held restore: %s", a.Raw)
	}
	contains(t, a.str("message"), "The restore "+opID+" is still running", "Poll it with box_operation (operation "+opID)
	// The poll now waits on the restore's end (the one wait of this
	// process), and has not answered.
	deadline := time.Now().Add(time.Minute)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for n, _ := e.Core.Engine().Listening(); n < 1; n, _ = e.Core.Engine().Listening() {
		select {
		case a = <-polled:
			t.Fatalf("the poll answered while its restore still ran: %d %s", a.Status, a.Raw)
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			t.Fatal("the poll never waited on the restore's end")
		}
	}
	close(held.let)
	a = <-polled
	if a.Status != 200 || a.str("state") != snapshots.OpDone || a.str("request") != id {
		t.Fatalf("the poll across the approval: %d %s", a.Status, a.Raw)
	}
	op, _ := a.JSON["operation"].(map[string]any)
	if op == nil || op["kind"] != snapshots.OpRestore || op["state"] != snapshots.OpDone {
		t.Fatalf("the poll across the approval names no done restore: %s", a.Raw)
	}
	contains(t, a.str("message"), "before the upgrade")
}

// post is call for a goroutine: it never stops the test, and answers a
// failed request as status 0.
func (e *env) post(token, path string, body any) answer {
	raw, _ := json.Marshal(body)
	req, err := http.NewRequest("POST", e.srv.URL+"/api/v1"+path, bytes.NewReader(raw))
	if err != nil {
		return answer{}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		return answer{Raw: []byte(err.Error())}
	}
	defer resp.Body.Close()
	a := answer{Status: resp.StatusCode}
	a.Raw, _ = io.ReadAll(resp.Body)
	_ = json.Unmarshal(a.Raw, &a.JSON)
	return a
}
