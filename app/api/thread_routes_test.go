package api_test

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/api"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// TestNoGroupAnswersForAnotherThreadsBox walks every route that names a
// box, from the router itself, and every tool that takes one, from the
// tool table, so a route or a tool added to any group is tried too: with
// one thread's token against another thread's box (by its name and by its
// ID) and snapshot, each answers exactly as a made-up name does, or
// refuses the agent as the person's own, never with a success; and
// nothing of the other thread's box or snapshot changes.
func TestNoGroupAnswersForAnotherThreadsBox(t *testing.T) {
	t.Parallel()
	e := setup(t)
	tokA, _, snB := e.twoThreads(t)
	ctx := context.Background()
	before, boxB, err := e.Core.Snapshot(ctx, snapshots.Owner(), snB)
	if err != nil {
		t.Fatal(err)
	}
	const fakeBox, fakeSnap = "zz-made-up", "sn00000000zzzz"
	// same calls the other thread's box and a made-up one alike, and says
	// what the first tells that the second does not.
	same := func(what, method, real, fake, other string, realBody, fakeBody any) {
		t.Helper()
		r := e.call(t, method, real, tokA, realBody)
		f := e.call(t, method, fake, tokA, fakeBody)
		if r.Status >= 200 && r.Status < 300 {
			t.Errorf("%s answered another thread's box %d: %s", what, r.Status, r.Raw)
			return
		}
		norm := strings.NewReplacer(other, fakeBox, snB, fakeSnap).Replace(string(r.Raw))
		if r.Status != http.StatusForbidden && (r.Status != f.Status || norm != string(f.Raw)) {
			t.Errorf("%s tells another thread's box from a made-up one:\nreal %d %s\nfake %d %s", what, r.Status, r.Raw, f.Status, f.Raw)
		}
	}
	routes, ok := api.New(e.APIOptions()).(chi.Routes)
	if !ok {
		t.Fatal("api.New is not a chi router")
	}
	var tried int
	err = chi.Walk(routes, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if !strings.Contains(route, "{box}") {
			return nil
		}
		var body any
		if method != http.MethodGet {
			body = map[string]any{}
		}
		for _, other := range []string{"b-box", boxB.ID} {
			real := strings.NewReplacer("{box}", other, "{snapshot}", snB).Replace(route)
			fake := strings.NewReplacer("{box}", fakeBox, "{snapshot}", fakeSnap).Replace(route)
			same(method+" "+real, method, real, fake, other, body, body)
		}
		tried++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if tried < 30 {
		t.Fatalf("tried %d routes that name a box, want the 30 or more of the route table", tried)
	}
	tools := map[string]bool{}
	for _, tool := range api.ToolTable() {
		takes := map[string]bool{}
		pt := reflect.TypeOf(tool.Params)
		for i := 0; i < pt.NumField(); i++ {
			takes[strings.Split(pt.Field(i).Tag.Get("json"), ",")[0]] = true
		}
		if !takes["box"] {
			continue
		}
		for _, other := range []string{"b-box", boxB.ID} {
			real, fake := map[string]any{"box": other}, map[string]any{"box": fakeBox}
			if takes["snapshot"] {
				real["snapshot"], fake["snapshot"] = snB, fakeSnap
			}
			same("the tool "+tool.Name+" on "+other, "POST", "/tools/"+tool.Name, "/tools/"+tool.Name, other, real, fake)
		}
		tools[tool.Name] = true
	}
	// A release's plan tells no more than the release.
	if !tools["box_release"] {
		t.Error("no box_release tool was tried")
	}
	for _, other := range []string{"b-box", boxB.ID} {
		same("box_release's dry run on "+other, "POST", "/tools/box_release", "/tools/box_release", other,
			map[string]any{"box": other, "dry_run": true}, map[string]any{"box": fakeBox, "dry_run": true})
	}
	after, _, err := e.Core.Snapshot(ctx, snapshots.Owner(), snB)
	if err != nil {
		t.Fatalf("thread B's snapshot after thread A's calls: %v", err)
	}
	if after.Name != before.Name || after.Automatic != before.Automatic || after.Kept() != before.Kept() || after.State != before.State {
		t.Fatalf("thread A's calls changed thread B's snapshot: %+v, was %+v", after, before)
	}
	if b, err := e.Core.Box(ctx, snapshots.Owner(), boxB.ID); err != nil || b.State != boxB.State {
		t.Fatalf("thread A's calls changed thread B's box: %+v (%v), was %+v", b, err, boxB)
	}
}
