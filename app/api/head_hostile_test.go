package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// TestHeadRefusesHostileSnapshots: box_head (over JSON and MCP) and PUT
// /boxes/{box}/head asked by an agent to put a box's head on a snapshot
// of another of its boxes, on another thread's snapshot or box, on a
// guessed or malformed ID, on a deleted snapshot or on a lost one are
// refused: another box's or thread's snapshot and a deleted one read as a
// made-up one does, a lost one says only a ready snapshot can be the
// head. Each refusal leaves the head, every row and the folders as they
// were.
func TestHeadRefusesHostileSnapshots(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	token, agent := e.agent(t, "Hostile heads")
	_, other := e.agent(t, "Another thread")
	e.Box(t, agent, "amber-fox")
	e.Box(t, agent, "birch-wren")
	e.Box(t, other, "cedar-moss")
	e.TakeReady(t, agent, "amber-fox", "one")
	gone := e.TakeReady(t, agent, "amber-fox", "gone")
	lost := e.TakeReady(t, agent, "amber-fox", "spoilt")
	two := e.TakeReady(t, agent, "amber-fox", "two")
	sibling := e.TakeReady(t, agent, "birch-wren", "b1")
	theirs := e.TakeReady(t, other, "cedar-moss", "c1")
	op, err := e.Keeps.Delete(ctx, agent, snapshots.DeleteRequest{Snapshot: gone.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("delete gone: %s", got.State)
	}
	if _, err := e.Pool.Exec(ctx, `UPDATE snapshots SET state = 'lost' WHERE id = $1`, lost.ID); err != nil {
		t.Fatal(err)
	}
	ses, err := mcpSession(t, e.srv.URL, token)
	if err != nil {
		t.Fatal(err)
	}
	defer ses.Close()
	head := func() string {
		t.Helper()
		var h *string
		if err := e.Pool.QueryRow(ctx, `SELECT head_id FROM boxes WHERE name = 'amber-fox'`).Scan(&h); err != nil {
			t.Fatal(err)
		}
		if h == nil {
			return ""
		}
		return *h
	}
	if head() != two.ID {
		t.Fatalf("amber-fox's head is %q, want two %s", head(), two.ID)
	}
	guessed := snapshots.NewID(snapshots.PrefixSnapshot)

	for _, tc := range []struct {
		what, box, snapshot, words string
		code                       snapshots.Code
	}{
		{"another box's snapshot", "amber-fox", sibling.ID, "No snapshot " + sibling.ID + " that you can see.", snapshots.CodeNotFound},
		{"another box's snapshot by name", "amber-fox", "b1", "No snapshot named ‘b1’ on amber-fox that you can see.", snapshots.CodeNotFound},
		{"another thread's snapshot", "amber-fox", theirs.ID, "No snapshot " + theirs.ID + " that you can see.", snapshots.CodeNotFound},
		{"another thread's box", "cedar-moss", theirs.ID, "No snapshot " + theirs.ID + " that you can see.", snapshots.CodeNotFound},
		{"another thread's box by name", "cedar-moss", "c1", "No box cedar-moss that you can see.", snapshots.CodeNotFound},
		{"a guessed ID", "amber-fox", guessed, "No snapshot " + guessed + " that you can see.", snapshots.CodeNotFound},
		{"a path for an ID", "amber-fox", "snp_../../etc/passwd", "No snapshot named ‘snp_../../etc/passwd’ on amber-fox that you can see.", snapshots.CodeNotFound},
		{"a deleted snapshot", "amber-fox", gone.ID, "No snapshot " + gone.ID + " that you can see.", snapshots.CodeNotFound},
		{"a deleted snapshot by name", "amber-fox", "gone", "No snapshot named ‘gone’ on amber-fox that you can see.", snapshots.CodeNotFound},
		{"a lost snapshot", "amber-fox", lost.ID, "‘spoilt’ is lost: only a ready snapshot can be the head.", snapshots.CodePlan},
	} {
		before := shotOf(t, e)
		args := map[string]any{"box": tc.box, "snapshot": tc.snapshot}
		a := e.call(t, "POST", "/tools/box_head", token, args)
		if a.errorCode() != string(tc.code) || !strings.Contains(a.errorWords(), tc.words) {
			t.Errorf("%s over JSON: %d %s, want %s saying %q", tc.what, a.Status, a.Raw, tc.code, tc.words)
		}
		text, refused := mcpRefusal(t, ses, "box_head", args)
		if !refused || !strings.Contains(text, `"code":"`+string(tc.code)+`"`) || !strings.Contains(text, tc.words) {
			t.Errorf("%s over MCP: refused %v, %s, want %s saying %q", tc.what, refused, text, tc.code, tc.words)
		}
		rest := e.call(t, "PUT", "/boxes/"+tc.box+"/head", token, map[string]any{"snapshot": tc.snapshot})
		if rest.errorCode() != string(tc.code) || !strings.Contains(rest.errorWords(), tc.words) {
			t.Errorf("%s over REST: %d %s, want %s saying %q", tc.what, rest.Status, rest.Raw, tc.code, tc.words)
		}
		sameShot(t, tc.what, before, shotOf(t, e))
		if head() != two.ID {
			t.Fatalf("%s moved the head to %q", tc.what, head())
		}
	}
}
