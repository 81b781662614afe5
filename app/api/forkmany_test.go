package api_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/wire"
	"github.com/boxsnap/boxsnap/providers"
)

// TestToolForkMany: box_fork with count forks the box now into that many
// boxes of the agent's thread from one snapshot, each its own box with its
// own identity and result; the answer is a ForkManyAnswer as openapi.json
// says; a retry with the same request answers the same forks, one with
// another count is refused; a count over the setting is refused before
// anything is taken. The REST route forks a snapshot into many the same.
func TestToolForkMany(t *testing.T) {
	t.Parallel()
	e := setup(t)
	doc := readOpenAPI(t, e)
	token, agent := e.agent(t, "Try three fixes")
	src := e.Box(t, agent, "amber-fox")
	if err := os.WriteFile(filepath.Join(e.Local.BoxDir(providers.Guest{Ref: src.GuestRef}), "notes.txt"), []byte("at the take"), 0o644); err != nil {
		t.Fatal(err)
	}

	a := e.call(t, "POST", "/tools/box_fork", token, map[string]any{"box": "amber-fox", "count": 11}).must(t, 400)
	contains(t, a.errorWords(), "A fork makes 1 to 10 boxes in one call, not 11.")
	if names := e.snapshotNames(t, "amber-fox"); len(names) != 0 {
		t.Fatalf("a refused count left snapshots: %q", names)
	}

	args := map[string]any{"box": "amber-fox", "name": "fix", "count": 3, "request": "three"}
	a = e.call(t, "POST", "/tools/box_fork", token, args).must(t, 200)
	var v any
	if err := json.Unmarshal(a.Raw, &v); err != nil {
		t.Fatal(err)
	}
	if err := validate(doc, doc.Components.Schemas["ForkManyAnswer"], v, "ForkManyAnswer"); err != nil {
		t.Fatalf("%v\n%s", err, a.Raw)
	}
	var ans wire.ForkManyAnswer
	if err := json.Unmarshal(a.Raw, &ans); err != nil {
		t.Fatal(err)
	}
	contains(t, ans.Message, ans.Took+" Made fix-1, fix-2 and fix-3, forked from amber-fox at ")
	if len(ans.Forks) != 3 || !snapshots.ValidID(snapshots.PrefixSnapshot, ans.Forked) {
		t.Fatalf("box_fork with count 3 answered %s", a.Raw)
	}
	ids := map[string]bool{}
	for i, f := range ans.Forks {
		want := []string{"fix-1", "fix-2", "fix-3"}[i]
		if f.Name != want || f.State != string(snapshots.OpDone) || ids[f.Box] || f.Box == src.ID {
			t.Fatalf("fork %d: %+v", i+1, f)
		}
		ids[f.Box] = true
		b := e.call(t, "GET", "/boxes/"+want, token, nil).must(t, 200)
		if b.str("id") != f.Box || b.str("thread") != agent.Thread {
			t.Fatalf("%s is %s", want, b.Raw)
		}
		idf, err := os.ReadFile(filepath.Join(e.Local.BoxDir(providers.Guest{Ref: b.str("guestRef")}), ".boxsnap", "identity"))
		if err != nil {
			t.Fatalf("%s's identity: %v", want, err)
		}
		contains(t, string(idf), f.Box)
	}
	// One capture for all of them.
	if names := e.snapshotNames(t, "amber-fox"); len(names) != 1 {
		t.Fatalf("amber-fox's snapshots after a fork into 3: %q", names)
	}
	again := e.call(t, "POST", "/tools/box_fork", token, args).must(t, 200)
	if string(again.Raw) != string(a.Raw) {
		t.Fatalf("a retry answered %s, the first %s", again.Raw, a.Raw)
	}
	args["count"] = 2
	e.call(t, "POST", "/tools/box_fork", token, args).must(t, 409)

	// The REST route: a snapshot into two, as the person's machines.
	r := e.call(t, "POST", "/boxes/amber-fox/snapshots/"+ans.Forked+"/fork?wait=true", e.owner, map[string]any{"count": 2, "asMachine": true}).must(t, 200)
	var rest wire.ForkManyAnswer
	if err := json.Unmarshal(r.Raw, &rest); err != nil {
		t.Fatal(err)
	}
	if len(rest.Forks) != 2 || rest.Forks[0].Name != "amber-fox-fork" || rest.Forks[1].Name != "amber-fox-fork-2" || rest.Forked != ans.Forked {
		t.Fatalf("POST .../fork with count 2 answered %s", r.Raw)
	}
}
