package api_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/api"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// snapshotNames lists the names of a box's snapshots as the owner sees them.
func (e *env) snapshotNames(t *testing.T, box string) []string {
	t.Helper()
	a := e.call(t, "GET", "/boxes/"+box+"/snapshots", e.owner, nil).must(t, 200)
	var names []string
	for _, b := range a.JSON["boxes"].([]any) {
		for _, s := range b.(map[string]any)["snapshots"].([]any) {
			names = append(names, s.(map[string]any)["name"].(string))
		}
	}
	return names
}

// TestToolFork: box_fork makes a new box of the agent's thread from a
// snapshot, or from the box now after a take named “for a fork”, and
// answers the new box as box_acquire does, with “forked from amber-fox at
// 10:42”.
func TestToolFork(t *testing.T) {
	t.Parallel()
	e := setup(t)
	token, agent := e.agent(t, "Try two fixes")
	src := e.Box(t, agent, "amber-fox")
	file := filepath.Join(e.Local.BoxDir(providers.Guest{Ref: src.GuestRef}), "notes.txt")
	if err := os.WriteFile(file, []byte("at the take"), 0o644); err != nil {
		t.Fatal(err)
	}
	taken := e.call(t, "POST", "/tools/box_snapshot", token, map[string]any{"box": "amber-fox", "name": "before"}).must(t, 200).str("snapshot")
	if err := os.WriteFile(file, []byte("after the take"), 0o644); err != nil {
		t.Fatal(err)
	}

	// From a snapshot, by its ID alone.
	a := e.call(t, "POST", "/tools/box_fork", token, map[string]any{"snapshot": taken, "name": "amber-copy"}).must(t, 200)
	contains(t, a.str("message"), "Made amber-copy, forked from amber-fox at ")
	if !strings.HasPrefix(a.str("from"), "forked from amber-fox at ") || a.str("name") != "amber-copy" || a.str("thread") != agent.Thread ||
		!snapshots.ValidID(snapshots.PrefixBox, a.str("id")) || a.str("forked") != taken || a.str("took") != "" {
		t.Fatalf("box_fork answered %s", a.Raw)
	}
	// The new box, as box_acquire answers it: what GET /boxes/{box} says.
	got := e.call(t, "GET", "/boxes/amber-copy", token, nil).must(t, 200)
	if got.str("id") != a.str("id") || got.str("state") != a.str("state") {
		t.Fatalf("the fork's box %s, box_fork said %s", got.Raw, a.Raw)
	}
	fork, err := e.Core.Box(t.Context(), agent, "amber-copy")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(e.Local.BoxDir(providers.Guest{Ref: fork.GuestRef}), "notes.txt")); string(b) != "at the take" {
		t.Fatalf("the fork holds %q", b)
	}

	// From the box now: a snapshot named “for a fork” first, whose words
	// the answer passes on; a repeat of the request is the same fork.
	a = e.call(t, "POST", "/tools/box_fork", token, map[string]any{"box": "amber-fox", "request": "f-1"}).must(t, 200)
	contains(t, a.str("took"), "Took ‘"+api.ForkTakeName+"’ (", "of amber-fox in ", "2 of 5 for this box.")
	contains(t, a.str("message"), a.str("took")+" Made amber-fox-fork, forked from amber-fox at ")
	if a.str("name") != "amber-fox-fork" || a.str("thread") != agent.Thread {
		t.Fatalf("box_fork of the box now answered %s", a.Raw)
	}
	again := e.call(t, "POST", "/tools/box_fork", token, map[string]any{"box": "amber-fox", "request": "f-1"}).must(t, 200)
	if again.str("operation") != a.str("operation") || again.str("id") != a.str("id") || again.str("forked") != a.str("forked") {
		t.Fatalf("a repeat made another fork: %s, the first %s", again.Raw, a.Raw)
	}
	forkNow, err := e.Core.Box(t.Context(), agent, "amber-fox-fork")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(e.Local.BoxDir(providers.Guest{Ref: forkNow.GuestRef}), "notes.txt")); string(b) != "after the take" {
		t.Fatalf("the fork of the box now holds %q", b)
	}
	if names := e.snapshotNames(t, "amber-fox"); len(names) != 2 {
		t.Fatalf("amber-fox's snapshots: %q", names)
	}

	// A name another thread's box holds is refused before the take, in
	// words that do not say a box holds it: nothing is taken, and a repeat
	// with a request ID is refused alike.
	tokB, _ := e.agent(t, "Another thread")
	e.call(t, "POST", "/boxes", tokB, map[string]any{"name": "held-name", "template": "blank"}).must(t, 201)
	for _, body := range []map[string]any{{"box": "amber-fox", "name": "held-name"}, {"box": "amber-fox", "name": "held-name", "request": "f-2"}, {"box": "amber-fox", "name": "held-name", "request": "f-2"}} {
		a = e.call(t, "POST", "/tools/box_fork", token, body).must(t, 409)
		if w := a.errorWords(); w != "The name held-name cannot be used: choose another." {
			t.Fatalf("box_fork into another thread's box's name said %q", w)
		}
		if names := e.snapshotNames(t, "amber-fox"); len(names) != 2 {
			t.Fatalf("after a refused fork, amber-fox's snapshots: %q", names)
		}
	}

	// Checked before the take: a box whose image lacks the identity reset
	// cannot fork, and nothing is taken.
	bare := e.Box(t, agent, "bare-wren")
	if err := os.Remove(filepath.Join(e.Local.BoxDir(providers.Guest{Ref: bare.GuestRef}), ".boxsnap", "identity")); err != nil {
		t.Fatal(err)
	}
	a = e.call(t, "POST", "/tools/box_fork", token, map[string]any{"box": "bare-wren"}).must(t, 409)
	contains(t, a.errorWords(), "Taken before ", "image had the identity reset: it could not be forked after a release. To fork or keep, refresh the image, make the box again from it and take a new snapshot.")
	if names := e.snapshotNames(t, "bare-wren"); len(names) != 0 {
		t.Fatalf("a fork refused before its take took %q", names)
	}
	// A name in use that the agent can see is refused before the take.
	a = e.call(t, "POST", "/tools/box_fork", token, map[string]any{"box": "amber-fox", "name": "amber-copy"}).must(t, 409)
	contains(t, a.errorWords(), "A box named amber-copy exists already.")
	if names := e.snapshotNames(t, "amber-fox"); len(names) != 2 {
		t.Fatalf("a fork refused before its take took: %q", names)
	}

	// The source's log: fork-asked, then forked.
	l := e.call(t, "GET", "/boxes/amber-fox/log", token, nil).must(t, 200)
	kinds := map[string]int{}
	for _, ev := range l.JSON["events"].([]any) {
		kinds[ev.(map[string]any)["kind"].(string)]++
	}
	if kinds[snapshots.EvForkAsked] != 2 || kinds[snapshots.EvForked] != 2 {
		t.Fatalf("amber-fox's log counts %v", kinds)
	}
}

// TestRESTFork: POST .../fork answers the operation at once, or its words
// with wait=true; the person's fork goes into the box's thread, or with
// asMachine is one of their machines. GET .../fork checks and changes
// nothing.
func TestRESTFork(t *testing.T) {
	t.Parallel()
	e := setup(t)
	token, agent := e.agent(t, "Ship the release")
	e.Box(t, agent, "calm-bay")
	e.call(t, "POST", "/boxes/calm-bay/snapshots?wait=true", token, map[string]any{"name": "v1"}).must(t, 200)

	// The check: from the plan, and whether a name is free.
	c := e.call(t, "GET", "/boxes/calm-bay/snapshots/v1/fork", e.owner, nil).must(t, 200)
	if c.JSON["ok"] != true {
		t.Fatalf("check %s", c.Raw)
	}
	contains(t, c.str("message"), "‘v1’ of calm-bay can be forked: about ")
	c = e.call(t, "GET", "/boxes/calm-bay/snapshots/v1/fork?name=calm-bay", e.owner, nil).must(t, 200)
	if c.JSON["ok"] != false || c.str("why") != "A box named calm-bay exists already." {
		t.Fatalf("check of a name in use %s", c.Raw)
	}

	// The person, into the box's thread, at once (202), then its end.
	a := e.call(t, "POST", "/boxes/calm-bay/snapshots/v1/fork", e.owner, map[string]any{"name": "calm-bay-2"}).must(t, 202)
	op := a.JSON["operation"].(map[string]any)
	if op["kind"] != "fork" {
		t.Fatalf("202 with %s", a.Raw)
	}
	end := e.call(t, "GET", "/operations/"+op["id"].(string)+"?wait=true", e.owner, nil).must(t, 200)
	contains(t, end.str("message"), "Made calm-bay-2, forked from calm-bay at ")
	if b := e.call(t, "GET", "/boxes/calm-bay-2", token, nil).must(t, 200); b.str("thread") != agent.Thread {
		t.Fatalf("the person's fork is not in the box's thread: %s", b.Raw)
	}

	// As one of the person's machines, waited for: the agent cannot see it.
	a = e.call(t, "POST", "/boxes/calm-bay/snapshots/v1/fork?wait=true", e.owner, map[string]any{"name": "my-bay", "asMachine": true}).must(t, 200)
	contains(t, a.str("message"), "Made my-bay, forked from calm-bay at ")
	if b := e.call(t, "GET", "/boxes/my-bay", e.owner, nil).must(t, 200); b.JSON["thread"] != nil {
		t.Fatalf("a fork as a machine has a thread: %s", b.Raw)
	}
	e.call(t, "GET", "/boxes/my-bay", token, nil).must(t, 404)

	// The agent's fork over REST is its own thread's.
	a = e.call(t, "POST", "/boxes/calm-bay/snapshots/v1/fork?wait=true", token, nil).must(t, 200)
	contains(t, a.str("message"), "Made calm-bay-fork, forked from calm-bay at ")
	if b := e.call(t, "GET", "/boxes/calm-bay-fork", token, nil).must(t, 200); b.str("thread") != agent.Thread {
		t.Fatalf("the agent's fork %s", b.Raw)
	}
}
