package api_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// hostileShot is what a refused call must leave as it was: the rows
// (operations, box log, snapshots, boxes, retry answers) and the local
// backend's folders.
type hostileShot struct {
	rows    map[string]string
	folders []string
}

// shotOf reads every row a tool could add or change, and the names of
// the local backend's folders two levels down.
func shotOf(t *testing.T, e *env) hostileShot {
	t.Helper()
	ctx := context.Background()
	s := hostileShot{rows: map[string]string{}}
	for _, q := range []string{
		`SELECT 'op ' || id, kind || ' ' || state FROM operations`,
		`SELECT 'log ' || id::text, kind FROM box_log`,
		`SELECT 'snapshot ' || id, state || ' ' || name FROM snapshots`,
		`SELECT 'box ' || id, state || ' ' || name || ' ' || coalesce(head_id, '-') FROM boxes`,
		`SELECT 'answer ' || tool || ' ' || args, status::text FROM tool_answers`,
	} {
		rows, err := e.Pool.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var k, v string
			if err := rows.Scan(&k, &v); err != nil {
				t.Fatal(err)
			}
			s.rows[k] = v
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	root := e.Local.Root()
	top, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range top {
		s.folders = append(s.folders, d.Name())
		if !d.IsDir() {
			continue
		}
		sub, _ := os.ReadDir(filepath.Join(root, d.Name()))
		for _, f := range sub {
			s.folders = append(s.folders, filepath.Join(d.Name(), f.Name()))
		}
	}
	sort.Strings(s.folders)
	return s
}

// sameShot fails the test, naming what, when a refused call changed
// anything.
func sameShot(t *testing.T, what string, before, after hostileShot) {
	t.Helper()
	if !reflect.DeepEqual(before.rows, after.rows) {
		for k, v := range after.rows {
			if before.rows[k] != v {
				t.Errorf("%s changed %s: %q, was %q", what, k, v, before.rows[k])
			}
		}
		for k, v := range before.rows {
			if _, ok := after.rows[k]; !ok {
				t.Errorf("%s removed %s (%q)", what, k, v)
			}
		}
	}
	if !reflect.DeepEqual(before.folders, after.folders) {
		t.Errorf("%s changed the local folders:\n%q\nwas\n%q", what, after.folders, before.folders)
	}
}

// mcpRefusal calls tool over MCP and answers the words of its refusal:
// a tool's error, or the protocol's when the SDK refuses the arguments
// against the tool's schema before the tool runs. ok is false when the
// call was not refused.
func mcpRefusal(t *testing.T, ses *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := ses.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return err.Error(), true
	}
	text := ""
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	return text, res.IsError
}

// TestForkManyRefusesHostileCounts: box_fork's count and the REST fork's
// count from an agent, out of range or not a whole number (negative, over
// the setting, enormous, a string, a fraction, past int64) and 0 sent as
// such (openapi.json's minimum is 1; only a count left out is one fork),
// over JSON and over MCP, are each refused with code invalid, in words
// that say what count is, and change nothing: no snapshot taken, no
// operation, no box, no folder. A refused count never becomes one fork.
func TestForkManyRefusesHostileCounts(t *testing.T) {
	t.Parallel()
	e := setup(t)
	token, agent := e.agent(t, "Hostile counts")
	e.Box(t, agent, "amber-fox")
	sn := e.TakeReady(t, agent, "amber-fox", "one")
	ses, err := mcpSession(t, e.srv.URL, token)
	if err != nil {
		t.Fatal(err)
	}
	defer ses.Close()
	most := e.Forks.MaxCount()

	for _, tc := range []struct {
		name  string
		count any
		words string
	}{
		{"zero", 0, "count is how many boxes to fork into, 1 or more; leave it out for one."},
		{"negative", -1, "count is how many boxes to fork into, 1 or more; leave it out for one."},
		{"very negative", -9223372036854775807, "count is how many boxes to fork into, 1 or more; leave it out for one."},
		{"over the setting", most + 1, "A fork makes 1 to 10 boxes in one call, not 11."},
		{"huge", int64(1) << 62, "A fork makes 1 to 10 boxes in one call, not 4611686018427387904."},
		{"past int64", 1e30, "count must be a whole number, not 1e+30, which is out of range."},
		{"a string", "3", "count must be a whole number, not a string."},
		{"a fraction", 2.5, "count must be a whole number, not 2.5."},
		{"a list", []int{3}, "count must be a whole number, not an array."},
		{"null-like string", "null", "count must be a whole number, not a string."},
	} {
		for _, args := range []map[string]any{
			{"box": "amber-fox", "count": tc.count},
			{"box": "amber-fox", "snapshot": "one", "count": tc.count, "request": "hostile-" + tc.name},
		} {
			before := shotOf(t, e)
			a := e.call(t, "POST", "/tools/box_fork", token, args)
			if a.Status != 400 || a.errorCode() != string(snapshots.CodeInvalid) || !strings.Contains(a.errorWords(), tc.words) {
				t.Errorf("%s over JSON %v: %d %s, want 400 invalid saying %q", tc.name, args, a.Status, a.Raw, tc.words)
			}
			sameShot(t, tc.name+" over JSON", before, shotOf(t, e))

			text, refused := mcpRefusal(t, ses, "box_fork", args)
			if !refused || !strings.Contains(text, tc.words) {
				t.Errorf("%s over MCP %v: refused %v, %q, want it to say %q", tc.name, args, refused, text, tc.words)
			}
			sameShot(t, tc.name+" over MCP", before, shotOf(t, e))

			rest := e.call(t, "POST", "/boxes/amber-fox/snapshots/"+sn.ID+"/fork", token, map[string]any{"count": tc.count})
			if rest.Status != 400 || rest.errorCode() != string(snapshots.CodeInvalid) || !strings.Contains(rest.errorWords(), tc.words) {
				t.Errorf("%s over REST: %d %s, want 400 invalid saying %q", tc.name, rest.Status, rest.Raw, tc.words)
			}
			sameShot(t, tc.name+" over REST", before, shotOf(t, e))
		}
	}
}

// TestForkManyRefusesHostileNames: box_fork's and the REST fork's name for
// the new boxes, when it breaks the machine rule (a path separator, `..`,
// too long, a control or direction-changing character, capitals), or when
// one of the names it gives its forks does (name-10 past 40 characters),
// is refused with code invalid in the rule's words; a name whose forks'
// names a box of the caller's holds is refused naming it, and one another
// thread's box holds is refused without saying a box holds it. Each
// refusal makes no fork at all and changes nothing.
func TestForkManyRefusesHostileNames(t *testing.T) {
	t.Parallel()
	e := setup(t)
	token, agent := e.agent(t, "Hostile names")
	_, other := e.agent(t, "Another thread")
	e.Box(t, agent, "amber-fox")
	e.Box(t, agent, "fix-2")
	e.Box(t, other, "fix-3")
	sn := e.TakeReady(t, agent, "amber-fox", "one")
	ses, err := mcpSession(t, e.srv.URL, token)
	if err != nil {
		t.Fatal(err)
	}
	defer ses.Close()

	rule := snapshots.MachineNameWords("A box's name")
	for _, tc := range []struct {
		name, words string
		code        snapshots.Code
		count       int
	}{
		{"../etc", rule, snapshots.CodeInvalid, 3},
		{"a/b", rule, snapshots.CodeInvalid, 3},
		{"..", rule, snapshots.CodeInvalid, 2},
		{strings.Repeat("a", 300), rule, snapshots.CodeInvalid, 2},
		{"fix\nrm", rule, snapshots.CodeInvalid, 2},
		{"fix\x00", "Text in a request cannot hold a NUL character.", snapshots.CodeInvalid, 2},
		{"fix\u202egnp", rule, snapshots.CodeInvalid, 2},
		{"Fix", rule, snapshots.CodeInvalid, 2},
		{"-fix", rule, snapshots.CodeInvalid, 2},
		// 38 letters are a name; with ten forks, name-10 is 41 characters.
		{"a" + strings.Repeat("b", 37), rule, snapshots.CodeInvalid, 10},
		{"fix", snapshots.BoxExistsWords("fix-2") + " No fork was made.", snapshots.CodeConflict, 2},
		{"fix", "The name fix-3 cannot be used: choose another. No fork was made.", snapshots.CodeConflict, 3},
	} {
		args := map[string]any{"box": "amber-fox", "snapshot": "one", "name": tc.name, "count": tc.count}
		before := shotOf(t, e)
		a := e.call(t, "POST", "/tools/box_fork", token, args)
		if a.errorCode() != string(tc.code) || !strings.Contains(a.errorWords(), tc.words) {
			t.Errorf("name %q over JSON: %d %s, want %s saying %q", tc.name, a.Status, a.Raw, tc.code, tc.words)
		}
		if strings.Contains(a.errorWords(), "exists") && tc.words != snapshots.BoxExistsWords("fix-2")+" No fork was made." {
			t.Errorf("name %q: the refusal says another thread's box exists: %q", tc.name, a.errorWords())
		}
		sameShot(t, "name "+tc.name+" over JSON", before, shotOf(t, e))

		text, refused := mcpRefusal(t, ses, "box_fork", args)
		if !refused || !strings.Contains(text, jsonText(tc.words)) {
			t.Errorf("name %q over MCP: refused %v, %q, want it to say %q", tc.name, refused, text, tc.words)
		}
		sameShot(t, "name "+tc.name+" over MCP", before, shotOf(t, e))

		rest := e.call(t, "POST", "/boxes/amber-fox/snapshots/"+sn.ID+"/fork", token, map[string]any{"name": tc.name, "count": tc.count})
		if rest.errorCode() != string(tc.code) || !strings.Contains(rest.errorWords(), tc.words) {
			t.Errorf("name %q over REST: %d %s, want %s saying %q", tc.name, rest.Status, rest.Raw, tc.code, tc.words)
		}
		sameShot(t, "name "+tc.name+" over REST", before, shotOf(t, e))
	}
}

// jsonText is s as it reads inside a JSON string.
func jsonText(s string) string {
	raw, _ := json.Marshal(s)
	return strings.Trim(string(raw), `"`)
}

// TestForkManyOfAnotherThreadsSnapshot: an agent forking another thread's
// snapshot into many, by its ID (over JSON, MCP and REST) or by its box
// and name, reads it as a made-up snapshot does, and nothing is made.
func TestForkManyOfAnotherThreadsSnapshot(t *testing.T) {
	t.Parallel()
	e := setup(t)
	_, owner := e.agent(t, "Thread A")
	token, _ := e.agent(t, "Thread B")
	e.Box(t, owner, "amber-fox")
	theirs := e.TakeReady(t, owner, "amber-fox", "one")
	made := snapshots.NewID(snapshots.PrefixSnapshot)
	ses, err := mcpSession(t, e.srv.URL, token)
	if err != nil {
		t.Fatal(err)
	}
	defer ses.Close()

	for _, id := range []string{theirs.ID, made} {
		words := "No snapshot " + id + " that you can see."
		before := shotOf(t, e)
		args := map[string]any{"snapshot": id, "count": 3, "name": "mine"}
		a := e.call(t, "POST", "/tools/box_fork", token, args)
		if a.errorCode() != string(snapshots.CodeNotFound) || a.errorWords() != words {
			t.Errorf("box_fork of %s: %d %s, want not_found saying %q", id, a.Status, a.Raw, words)
		}
		if text, refused := mcpRefusal(t, ses, "box_fork", args); !refused || !strings.Contains(text, words) {
			t.Errorf("box_fork of %s over MCP: refused %v, %s", id, refused, text)
		}
		rest := e.call(t, "POST", "/boxes/amber-fox/snapshots/"+id+"/fork", token, map[string]any{"count": 3})
		if rest.errorCode() != string(snapshots.CodeNotFound) {
			t.Errorf("the REST fork of %s: %d %s, want not_found", id, rest.Status, rest.Raw)
		}
		sameShot(t, "a fork of "+id, before, shotOf(t, e))
	}
	a := e.call(t, "POST", "/tools/box_fork", token, map[string]any{"box": "amber-fox", "snapshot": "one", "count": 2})
	if a.errorCode() != string(snapshots.CodeNotFound) || a.errorWords() != "No box amber-fox that you can see." {
		t.Errorf("box_fork of another thread's box and name: %d %s", a.Status, a.Raw)
	}
}
