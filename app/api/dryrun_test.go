package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// files is every file under the local backend's root (the boxes' disks and
// the snapshots' store), each with a hash of what it holds.
func (f *mcpFixture) files(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	root := f.Local.Root()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		// The boxes' disk images are their file systems, whose files are
		// read through the boxes' folders; the images themselves change
		// under a read (ext4 notes access times).
		if err == nil && d.IsDir() && p == filepath.Join(root, "disks") {
			return fs.SkipDir
		}
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		h := sha256.Sum256(b)
		out[p] = hex.EncodeToString(h[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// jobs counts River's jobs, leaving out the periodic sweeps, which River's
// leader queues on its own clock.
func (f *mcpFixture) jobs(t *testing.T) int {
	t.Helper()
	var n int
	if err := f.Pool.QueryRow(context.Background(), "SELECT count(*) FROM river_job WHERE kind <> 'sweep'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDryRunChangesNothing: every destructive tool of the table (read from
// its MCP annotations, so a new one without a dry run fails here) takes
// dry_run; called so over MCP, it changes no row, no box log line, no job
// and no file, and answers the plan; the real call then carries out that
// plan. A dry run refuses as the real call refuses, in the same words.
func TestDryRunChangesNothing(t *testing.T) {
	t.Parallel()
	f := newMCPFixture(t)
	listed, err := f.ses.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	destructive := map[string]bool{}
	for _, tl := range listed.Tools {
		if tl.Annotations != nil && tl.Annotations.DestructiveHint != nil && *tl.Annotations.DestructiveHint {
			destructive[tl.Name] = true
		}
	}
	if len(destructive) < 4 {
		t.Fatalf("only %d destructive tools are listed: %v", len(destructive), destructive)
	}
	f.releaseDryRuns(t)
	tried := map[string]bool{}
	for _, c := range f.script() {
		if !destructive[c.tool] {
			if _, text, isErr := f.callMCP(t, c.tool, c.args); isErr {
				t.Fatalf("%s refused: %s", c.tool, text)
			}
			continue
		}
		tried[c.tool] = true
		f.writeNotes(t, "before "+c.tool)
		dryArgs := map[string]any{"dry_run": true}
		for k, v := range c.args {
			if k != "request" {
				dryArgs[k] = v
			}
		}
		before, beforeJobs, beforeFiles := f.state(t), f.jobs(t), f.files(t)
		plan, text, isErr := f.callMCP(t, c.tool, dryArgs)
		if isErr {
			t.Fatalf("%s with dry_run refused: %s", c.tool, text)
		}
		if after := f.state(t); !reflect.DeepEqual(before, after) {
			t.Errorf("%s's dry run changed the records: %+v to %+v", c.tool, before, after)
		}
		if n := f.jobs(t); n != beforeJobs {
			t.Errorf("%s's dry run queued %d jobs", c.tool, n-beforeJobs)
		}
		if after := f.files(t); !reflect.DeepEqual(beforeFiles, after) {
			t.Errorf("%s's dry run changed files under the local root", c.tool)
		}
		if plan["dryRun"] != true || !strings.HasSuffix(plan["message"].(string), snapshots.NothingChangedDryWords) {
			t.Errorf("%s's dry run answers %s", c.tool, text)
		}

		// A made-up box: the dry run refuses in the real call's words.
		bad := map[string]any{}
		for k, v := range dryArgs {
			bad[k] = v
		}
		bad["box"] = "no-such-box"
		_, dryNo, dryErr := f.callMCP(t, c.tool, bad)
		delete(bad, "dry_run")
		bad["replace"] = c.args["replace"]
		if bad["replace"] == nil {
			delete(bad, "replace")
		}
		_, realNo, realErr := f.callMCP(t, c.tool, bad)
		if !dryErr || !realErr || dryNo != realNo {
			t.Errorf("%s on a made-up box: the dry run answers %s, the real call %s", c.tool, dryNo, realNo)
		}

		done, text, isErr := f.callMCP(t, c.tool, c.args)
		if isErr {
			t.Fatalf("%s refused after its dry run: %s", c.tool, text)
		}
		switch c.tool {
		case "box_restore", "box_undo":
			// The plan named the target, and said an undo is taken first.
			if done["name"] != plan["name"] || done["snapshot"] != plan["snapshot"] {
				t.Errorf("%s planned ‘%v’ and restored ‘%v’", c.tool, plan["name"], done["name"])
			}
			if !strings.Contains(plan["message"].(string), "would first take an undo") || done["undo"] == nil || done["undo"] == "" {
				t.Errorf("%s: the plan %q, the restore's undo %v", c.tool, plan["message"], done["undo"])
			}
			// And what the undo costs: its space where the box's plan
			// says (the local backend's always does).
			if _, ok := plan["undoBytes"].(float64); !ok || !strings.Contains(plan["message"].(string), "The undo takes up to ") {
				t.Errorf("%s's plan does not say what its undo takes: %v", c.tool, plan)
			}
		case "box_reset":
			if plan["undo"] != true || done["undo"] == nil || done["undo"] == "" {
				t.Errorf("box_reset: the plan's undo %v, the reset's %v", plan["undo"], done["undo"])
			}
			logins := map[string]bool{}
			for _, l := range plan["logins"].([]any) {
				logins[l.(string)] = true
			}
			for _, k := range asStrings(done["kept"]) {
				if !logins[k] {
					t.Errorf("box_reset kept %s, which its plan did not name: %v", k, plan["logins"])
				}
			}
			if !strings.Contains(plan["message"].(string), "becomes a fresh copy of") {
				t.Errorf("box_reset's plan does not say what the box becomes: %s", plan["message"])
			}
		case "box_snapshot_delete":
			if done["snapshot"] != plan["snapshot"] || done["freed"] != plan["freed"] || done["freedBytes"] != plan["freedBytes"] {
				t.Errorf("box_snapshot_delete planned %v freeing %v (%v), and deleted %v freeing %v (%v)",
					plan["snapshot"], plan["freed"], plan["freedBytes"], done["snapshot"], done["freed"], done["freedBytes"])
			}
			if !strings.HasPrefix(plan["message"].(string), "Delete ‘spare’? Frees ") {
				t.Errorf("box_snapshot_delete's plan is not the Delete dialog's words: %s", plan["message"])
			}
		case "box_release":
			// The plan said the trash comes first and for how long, and
			// what goes and stays; the release then put the box there.
			var state string
			if err := f.Pool.QueryRow(context.Background(), `SELECT state FROM boxes WHERE name = $1`, c.args["box"]).Scan(&state); err != nil {
				t.Fatal(err)
			}
			hours, _ := plan["trashHours"].(float64)
			if hours <= 0 || !strings.Contains(plan["message"].(string), c.args["box"].(string)+" goes to the trash for ") ||
				plan["goes"] == nil || plan["kept"] == nil || state != string(snapshots.BoxTrashed) {
				t.Errorf("box_release planned %s, and left the box %s", text, state)
			}
		default:
			t.Errorf("%s is destructive, and this test does not know what its plan should carry out", c.tool)
		}
	}
	for name := range destructive {
		if !tried[name] {
			t.Errorf("the destructive tool %s is not in the script: give it a call", name)
		}
	}
}

// releaseDryRuns checks the release's route (box_release's twin) and the
// emptying of the trash, which has no tool: a release of calm-moss, with a
// kept snapshot and one nobody kept, and then emptying it from the trash. Each changes no row, no box log line, no job
// and no file; each refuses a made-up box (and the empty, an agent) in the
// real call's words; the real call then does what its plan said.
func (f *mcpFixture) releaseDryRuns(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	b := f.Box(t, f.who, "calm-moss")
	f.call(t, "POST", "/boxes/calm-moss/snapshots?wait=true", f.token, map[string]any{"name": "kept one"}).must(t, 200)
	f.call(t, "POST", "/boxes/calm-moss/snapshots?wait=true", f.token, map[string]any{"name": "unkept one"}).must(t, 200)
	op, err := f.Keeps.Keep(ctx, snapshots.Owner(), snapshots.KeepRequest{Box: b.ID, Snapshot: "kept one", Days: 30})
	if err != nil {
		t.Fatal(err)
	}
	f.Wait(t, op)
	for _, route := range []struct{ path, token, outsider, state string }{
		{"/boxes/calm-moss/release", f.token, "", "trashed"},
		{"/boxes/calm-moss/trash/empty", f.owner, f.token, "released"},
	} {
		before, beforeJobs, beforeFiles := f.state(t), f.jobs(t), f.files(t)
		plan := f.call(t, "POST", route.path+"?dry_run=true", route.token, nil).must(t, 200)
		if after := f.state(t); !reflect.DeepEqual(before, after) {
			t.Errorf("%s's dry run changed the records: %+v to %+v", route.path, before, after)
		}
		if n := f.jobs(t); n != beforeJobs {
			t.Errorf("%s's dry run queued %d jobs", route.path, n-beforeJobs)
		}
		if after := f.files(t); !reflect.DeepEqual(beforeFiles, after) {
			t.Errorf("%s's dry run changed files under the local root", route.path)
		}
		msg := plan.str("message")
		if plan.JSON["dryRun"] != true || !strings.HasSuffix(msg, snapshots.NothingChangedDryWords) ||
			!strings.Contains(msg, "that nobody kept go") || !strings.Contains(msg, "its kept snapshot stays, listed under it as released") ||
			!slices.Contains(asStrings(plan.JSON["goes"]), "unkept one") || !reflect.DeepEqual(asStrings(plan.JSON["kept"]), []string{"kept one"}) {
			t.Errorf("%s's dry run answers %s", route.path, plan.Raw)
		}
		// How long the kept one stays: its keep date, 30 days on.
		keeps, _ := plan.JSON["keeps"].([]any)
		if len(keeps) != 1 || keeps[0].(map[string]any)["name"] != "kept one" {
			t.Errorf("%s's dry run says no keep date of ‘kept one’: %s", route.path, plan.Raw)
		} else if until, err := time.Parse(time.RFC3339, keeps[0].(map[string]any)["until"].(string)); err != nil || until.Before(time.Now().Add(29*24*time.Hour)) {
			t.Errorf("%s's dry run keeps ‘kept one’ until %v (%v), not 30 days", route.path, until, err)
		}
		if trashFirst := strings.Contains(msg, "calm-moss goes to the trash for "); trashFirst != (route.state == "trashed") {
			t.Errorf("%s's dry run says the trash comes first: %v: %s", route.path, trashFirst, msg)
		}
		made := strings.Replace(route.path, "calm-moss", "no-such-box", 1)
		dryNo, realNo := f.call(t, "POST", made+"?dry_run=true", route.token, nil), f.call(t, "POST", made, route.token, nil)
		if dryNo.Status != realNo.Status || dryNo.errorWords() == "" || dryNo.errorWords() != realNo.errorWords() {
			t.Errorf("%s on a made-up box: the dry run answers %s, the real call %s", route.path, dryNo.Raw, realNo.Raw)
		}
		if route.outsider != "" {
			dryNo, realNo := f.call(t, "POST", route.path+"?dry_run=true", route.outsider, nil), f.call(t, "POST", route.path, route.outsider, nil)
			if dryNo.Status != realNo.Status || dryNo.errorWords() == "" || dryNo.errorWords() != realNo.errorWords() {
				t.Errorf("%s by an agent: the dry run answers %s, the real call %s", route.path, dryNo.Raw, realNo.Raw)
			}
		}

		f.call(t, "POST", route.path+"?wait=true", route.token, nil).must(t, 200)
		var state string
		if err := f.Pool.QueryRow(ctx, `SELECT state FROM boxes WHERE id = $1`, b.ID).Scan(&state); err != nil {
			t.Fatal(err)
		}
		trashes := plan.JSON["trashHours"].(float64) > 0
		if state != route.state || trashes != (route.state == "trashed") {
			t.Errorf("%s planned %v hours in the trash, and the box is %s", route.path, plan.JSON["trashHours"], state)
		}
		if route.state != "released" {
			continue
		}
		// The release into the trash took a final snapshot, which the
		// empty's plan names among what goes.
		plans := map[string]bool{}
		for _, name := range asStrings(plan.JSON["goes"]) {
			plans[name] = false
		}
		plans["kept one"] = true
		for name, want := range plans {
			var ready bool
			if err := f.Pool.QueryRow(ctx, `SELECT count(*) > 0 FROM snapshots WHERE box_id = $1 AND name = $2 AND state = 'ready'`, b.ID, name).Scan(&ready); err != nil {
				t.Fatal(err)
			}
			if ready != want {
				t.Errorf("after %s, ‘%s’ is ready: %v; its plan said %s", route.path, name, ready, plan.Raw)
			}
		}
	}
}

func asStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		out = append(out, x.(string))
	}
	return out
}
