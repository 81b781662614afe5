package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// TestAgentCannotReachOthersThroughNewRoutes tries this session's routes
// (history, Save and Unsave, Keep's renewal, reset, undo, the trash, Forget
// and the person's requests) with one thread's token against another
// thread's box and snapshot. Each answers exactly as a made-up name does,
// the person's own routes refuse an agent, and nothing of the other
// thread's changes.
func TestAgentCannotReachOthersThroughNewRoutes(t *testing.T) {
	t.Parallel()
	e := setup(t)
	tokA, tokB, snB := e.twoThreads(t)
	ctx := context.Background()
	before, _, err := e.Core.Snapshot(ctx, snapshots.Owner(), snB)
	if err != nil {
		t.Fatal(err)
	}
	const fakeBox, fakeSnap = "zz-made-up", "sn00000000zzzz"
	for _, c := range []struct{ method, path string }{
		{"GET", "/boxes/{box}/history"},
		{"POST", "/boxes/{box}/snapshots/{snap}/save"},
		{"POST", "/boxes/{box}/snapshots/{snap}/unsave"},
		{"POST", "/boxes/{box}/snapshots/{snap}/renew"},
		{"POST", "/boxes/{box}/reset"},
		{"POST", "/boxes/{box}/undo"},
		{"POST", "/boxes/{box}/trash/restore"},
	} {
		for _, other := range []string{"b-box", before.BoxID} {
			path := strings.NewReplacer("{box}", other, "{snap}", snB).Replace(c.path)
			fake := strings.NewReplacer("{box}", fakeBox, "{snap}", fakeSnap).Replace(c.path)
			real := e.call(t, c.method, path, tokA, map[string]any{})
			made := e.call(t, c.method, fake, tokA, map[string]any{})
			norm := strings.NewReplacer(other, fakeBox, snB, fakeSnap).Replace(string(real.Raw))
			if real.Status != 404 || real.Status != made.Status || norm != string(made.Raw) {
				t.Errorf("%s %s tells another thread's box from a made-up one:\nreal %d %s\nfake %d %s", c.method, path, real.Status, real.Raw, made.Status, made.Raw)
			}
		}
	}
	// The person's own routes refuse an agent, on its own box too.
	for _, c := range []struct {
		method, path string
		body         map[string]any
	}{
		{"PUT", "/boxes/a-box/history", map[string]any{"automatic": false}},
		{"DELETE", "/boxes/a-box/history", map[string]any{"confirm": "a-box"}},
		{"POST", "/boxes/a-box/trash/empty", nil},
		{"GET", "/backends/local/forget", nil},
		{"POST", "/backends/local/forget", nil},
		{"GET", "/approvals", nil},
		{"POST", "/approvals/ap00000000zzzz/approve", nil},
		{"POST", "/approvals/ap00000000zzzz/decline", nil},
	} {
		if a := e.call(t, c.method, c.path, tokA, c.body); a.Status != 403 {
			t.Errorf("an agent's %s %s answered %d %s, want 403", c.method, c.path, a.Status, a.Raw)
		}
	}
	// The trash an agent lists holds only its own thread's boxes.
	e.call(t, "POST", "/boxes/b-box/release?wait=true", tokB, nil).must(t, 200)
	if a := e.call(t, "GET", "/trash", tokA, nil).must(t, 200); strings.Contains(string(a.Raw), "b-box") {
		t.Errorf("thread A's trash lists thread B's box: %s", a.Raw)
	}
	after, _, err := e.Core.Snapshot(ctx, snapshots.Owner(), snB)
	if err != nil {
		t.Fatalf("thread B's snapshot after thread A's calls: %v", err)
	}
	if after.Name != before.Name || after.Automatic != before.Automatic || after.Kept() != before.Kept() {
		t.Fatalf("thread A's calls changed thread B's snapshot: %+v, was %+v", after, before)
	}
}
