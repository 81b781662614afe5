package api_test

import (
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// TestRetryKeyHostile: a retry key is the caller's own. Thread B sending
// thread A's key with A's very arguments (over JSON and MCP) is answered
// as any call of B's is, never with A's answer; B's own call under the
// same key does B's own work, a fork into many too. A key used again with
// other arguments or by another tool is refused with request_reused; a
// key over 100 characters, one with a control character and one past the
// body's cap are refused in words, over JSON and MCP. Every refusal changes
// nothing.
func TestRetryKeyHostile(t *testing.T) {
	t.Parallel()
	e := setup(t)
	tokenA, agentA := e.agent(t, "Thread A")
	tokenB, agentB := e.agent(t, "Thread B")
	e.Box(t, agentA, "amber-fox")
	e.Box(t, agentB, "birch-wren")
	sesB, err := mcpSession(t, e.srv.URL, tokenB)
	if err != nil {
		t.Fatal(err)
	}
	defer sesB.Close()
	sesA, err := mcpSession(t, e.srv.URL, tokenA)
	if err != nil {
		t.Fatal(err)
	}
	defer sesA.Close()

	argsA := map[string]any{"box": "amber-fox", "name": "a's take", "request": "k1"}
	first := e.call(t, "POST", "/tools/box_snapshot", tokenA, argsA).must(t, 200)
	snapA := first.str("snapshot")

	// B with A's key and A's arguments: A's box is not B's to see.
	before := shotOf(t, e)
	b := e.call(t, "POST", "/tools/box_snapshot", tokenB, argsA)
	if b.errorCode() != string(snapshots.CodeNotFound) || b.errorWords() != "No box amber-fox that you can see." || strings.Contains(string(b.Raw), snapA) {
		t.Fatalf("thread B sent A's key and arguments: %d %s", b.Status, b.Raw)
	}
	text, refused := mcpRefusal(t, sesB, "box_snapshot", argsA)
	if !refused || !strings.Contains(text, "No box amber-fox that you can see.") || strings.Contains(text, snapA) {
		t.Fatalf("thread B sent A's key and arguments over MCP: %v %s", refused, text)
	}
	sameShot(t, "B's call with A's key", before, shotOf(t, e))

	// B's own call under the same key is B's own take.
	own := e.call(t, "POST", "/tools/box_snapshot", tokenB, map[string]any{"box": "birch-wren", "name": "a's take", "request": "k1"}).must(t, 200)
	if own.str("snapshot") == snapA || own.str("snapshot") == "" {
		t.Fatalf("thread B's own call under A's key answered %s", own.Raw)
	}

	// A fork into many: each thread's key makes its own forks.
	forkA := e.call(t, "POST", "/tools/box_fork", tokenA, map[string]any{"box": "amber-fox", "snapshot": snapA, "count": 2, "request": "f1"}).must(t, 200)
	forkB := e.call(t, "POST", "/tools/box_fork", tokenB, map[string]any{"box": "birch-wren", "snapshot": own.str("snapshot"), "count": 2, "request": "f1"}).must(t, 200)
	if !strings.Contains(forkA.str("message"), "amber-fox-fork") || !strings.Contains(forkB.str("message"), "birch-wren-fork") {
		t.Fatalf("two threads' forks under one key: A %s, B %s", forkA.Raw, forkB.Raw)
	}
	before = shotOf(t, e)
	rest := e.call(t, "POST", "/boxes/amber-fox/snapshots/"+snapA+"/fork", tokenB, map[string]any{"count": 2, "request": "f1"})
	if rest.errorCode() != string(snapshots.CodeNotFound) || strings.Contains(string(rest.Raw), "amber-fox-fork") {
		t.Fatalf("thread B's REST fork of A's snapshot under A's key: %d %s", rest.Status, rest.Raw)
	}
	sameShot(t, "B's REST fork under A's key", before, shotOf(t, e))

	long := strings.Repeat("k", 101)
	for _, tc := range []struct {
		what  string
		tool  string
		args  map[string]any
		code  snapshots.Code
		words string
	}{
		{"other arguments", "box_snapshot", map[string]any{"box": "amber-fox", "name": "another", "request": "k1"},
			snapshots.CodeRequestReused, "The request ID k1 was used for another call (box_snapshot with other arguments): make a new request ID for this one."},
		{"another tool", "box_snapshot_save", map[string]any{"box": "amber-fox", "snapshot": snapA, "request": "k1"},
			snapshots.CodeRequestReused, "The request ID k1 was used for another call (box_snapshot): make a new request ID for this one."},
		{"a fork's key with another count", "box_fork", map[string]any{"box": "amber-fox", "snapshot": snapA, "count": 3, "request": "f1"},
			snapshots.CodeRequestReused, "The request ID f1 was used for another call (box_fork with other arguments): make a new request ID for this one."},
		{"a key of 101 characters", "box_snapshot", map[string]any{"box": "amber-fox", "request": long},
			snapshots.CodeInvalid, "request is an ID you make, at most 100 characters of text."},
		{"a key with a newline", "box_snapshot", map[string]any{"box": "amber-fox", "request": "k\n1"},
			snapshots.CodeInvalid, "request is an ID you make, at most 100 characters of text."},
		{"a key past the body's cap", "box_snapshot", map[string]any{"box": "amber-fox", "request": strings.Repeat("k", 2<<20)},
			"too_large", ""},
	} {
		before := shotOf(t, e)
		a := e.call(t, "POST", "/tools/"+tc.tool, tokenA, tc.args)
		if a.errorCode() != string(tc.code) || !strings.Contains(a.errorWords(), tc.words) {
			t.Errorf("%s: %d %s, want %s saying %q", tc.what, a.Status, a.Raw, tc.code, tc.words)
		}
		sameShot(t, tc.what, before, shotOf(t, e))
		text, refused := mcpRefusal(t, sesA, tc.tool, tc.args)
		if !refused || (tc.words != "" && !strings.Contains(text, jsonText(tc.words))) {
			t.Errorf("%s over MCP: refused %v, %.300s, want it to say %q", tc.what, refused, text, tc.words)
		}
		sameShot(t, tc.what+" over MCP", before, shotOf(t, e))
	}
}

// TestForkManyKeyIsNoOtherCallsKey: a fork into many keeps its forks'
// operations, and a fork of the box now its take, under keys of their own;
// a caller's call whose key happens to read as one of them (a single fork
// under k#1 beside a fork into many under k, a take under "take for fork
// n" beside a fork of the box now under n) is another call: the fork makes
// its own fork and takes its own snapshot, never answering the other's.
func TestForkManyKeyIsNoOtherCallsKey(t *testing.T) {
	t.Parallel()
	e := setup(t)
	token, agent := e.agent(t, "Two keys")
	e.Box(t, agent, "amber-fox")
	sn := e.TakeReady(t, agent, "amber-fox", "one")

	solo := e.call(t, "POST", "/tools/box_fork", token, map[string]any{"box": "amber-fox", "snapshot": sn.ID, "name": "solo", "request": "k#1"}).must(t, 200)
	if solo.str("name") != "solo" {
		t.Fatalf("the single fork answered %s", solo.Raw)
	}
	many := e.call(t, "POST", "/tools/box_fork", token, map[string]any{"box": "amber-fox", "snapshot": sn.ID, "name": "duo", "count": 1, "request": "k"}).must(t, 200)
	if !strings.Contains(many.str("message"), "Made duo") || strings.Contains(string(many.Raw), "solo") {
		t.Fatalf("a fork into one under k answered %s, after a single fork under k#1", many.Raw)
	}
	if got := e.call(t, "GET", "/boxes/duo", token, nil); got.Status != 200 {
		t.Fatalf("duo was not made: %d %s", got.Status, got.Raw)
	}

	// A take under a key that reads as the key of a fork of the box now's
	// own take: the fork takes its own snapshot.
	mine := e.call(t, "POST", "/tools/box_snapshot", token, map[string]any{"box": "amber-fox", "name": "mine", "request": "take for fork n"}).must(t, 200)
	now := e.call(t, "POST", "/tools/box_fork", token, map[string]any{"box": "amber-fox", "name": "trio", "request": "n"}).must(t, 200)
	if now.str("forked") == mine.str("snapshot") || now.str("took") == "" {
		t.Fatalf("a fork of the box now under n answered %s, after a take under %q made %s", now.Raw, "take for fork n", mine.str("snapshot"))
	}
}
