package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// files is every file under the local backend's root (the boxes' disks and
// the snapshots' store), each with a hash of what it holds.
func (f *mcpFixture) files(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(f.Local.Root(), func(p string, d fs.DirEntry, err error) error {
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

func asStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		out = append(out, x.(string))
	}
	return out
}
