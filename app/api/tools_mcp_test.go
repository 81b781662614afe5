package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boxsnap/boxsnap/app/api"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// toolCall is one call of an agent tool with its arguments.
type toolCall struct {
	tool string
	args map[string]any
}

// mcpFixture is an agent's thread with real boxes and real snapshots, the
// tools over MCP and as JSON on one server.
type mcpFixture struct {
	*env
	token string
	who   snapshots.Caller
	ses   *mcp.ClientSession
	box   *snapshots.Box // amber-fox, with notes.txt
	auto  string         // the ID of an automatic snapshot of amber-fox
}

// newMCPFixture makes amber-fox with notes.txt, its snapshot "before the
// migration", an automatic snapshot, and brisk-lake in the trash; the agent
// is connected over MCP.
func newMCPFixture(t *testing.T) *mcpFixture {
	t.Helper()
	e := setup(t)
	token, agent := e.agent(t, "Fix the sign-in flow")
	f := &mcpFixture{env: e, token: token, who: agent}
	f.box = e.Box(t, agent, "amber-fox")
	f.writeNotes(t, "the first notes")
	e.call(t, "POST", "/tools/box_snapshot", token, map[string]any{"box": "amber-fox", "name": "before the migration"}).must(t, 200)
	f.writeNotes(t, "the second notes")
	op, sn, err := e.Core.TakeAutomatic(context.Background(), f.box.ID, "the box changed")
	if err != nil {
		t.Fatal(err)
	}
	e.Wait(t, op)
	f.auto = sn.ID
	e.Box(t, agent, "brisk-lake")
	e.call(t, "POST", "/boxes/brisk-lake/release?wait=true", token, nil).must(t, 200)
	ses, err := mcpSession(t, e.srv.URL, token)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ses.Close() })
	f.ses = ses
	return f
}

// notesPath is amber-fox's notes.txt on the disk of its guest now.
func (f *mcpFixture) notesPath(t *testing.T) string {
	t.Helper()
	var ref string
	if err := f.Pool.QueryRow(context.Background(), `SELECT guest_ref FROM boxes WHERE id = $1`, f.box.ID).Scan(&ref); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(f.Local.BoxDir(providers.Guest{Ref: ref}), "notes.txt")
}

func (f *mcpFixture) writeNotes(t *testing.T, text string) {
	t.Helper()
	if err := os.WriteFile(f.notesPath(t), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// notes is what amber-fox's notes.txt holds now; "(none)" when it is gone.
func (f *mcpFixture) notes(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(f.notesPath(t))
	if errors.Is(err, fs.ErrNotExist) {
		return "(none)"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// script is a call of every tool of the table, each with real arguments
// that make it do its work, in an order where each can: the reads first,
// then the changes, the ones that overwrite amber-fox last. Each change
// carries its retry key.
func (f *mcpFixture) script() []toolCall {
	return []toolCall{
		{"box_list", map[string]any{}},
		{"box_snapshots", map[string]any{"box": "amber-fox"}},
		{"box_snapshot_files", map[string]any{"box": "amber-fox", "snapshot": "before the migration"}},
		{"box_snapshot_file", map[string]any{"box": "amber-fox", "snapshot": "before the migration", "path": "notes.txt"}},
		{"box_lineage", map[string]any{"box": "amber-fox", "snapshot": "before the migration"}},
		{"box_snapshot_diff", map[string]any{"box": "amber-fox", "snapshot": "before the migration"}},
		{"box_trash", map[string]any{}},
		{"box_snapshot", map[string]any{"box": "amber-fox", "name": "spare", "request": "k-take"}},
		{"box_snapshot_save", map[string]any{"box": "amber-fox", "snapshot": f.auto, "name": "a moment kept", "request": "k-save"}},
		{"box_snapshot_unsave", map[string]any{"box": "amber-fox", "snapshot": "spare", "request": "k-unsave"}},
		{"box_fork", map[string]any{"box": "amber-fox", "snapshot": "before the migration", "request": "k-fork"}},
		{"box_make", map[string]any{"template": "blank", "request": "k-make"}},
		{"box_trash_restore", map[string]any{"box": "brisk-lake", "request": "k-untrash"}},
		{"box_restore", map[string]any{"box": "amber-fox", "snapshot": "before the migration", "replace": true, "request": "k-restore"}},
		{"box_reset", map[string]any{"box": "amber-fox", "keep_logins": true, "request": "k-reset"}},
		{"box_undo", map[string]any{"box": "amber-fox", "request": "k-undo"}},
		{"box_snapshot_delete", map[string]any{"box": "amber-fox", "snapshot": "spare", "request": "k-delete"}},
	}
}

// callMCP calls a tool over MCP and answers its text, decoded, and whether
// it is an error.
func (f *mcpFixture) callMCP(t *testing.T, tool string, args map[string]any) (map[string]any, string, bool) {
	t.Helper()
	res, err := f.ses.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s over MCP: %v", tool, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	var got map[string]any
	if err := json.Unmarshal([]byte(text), &got); err != nil {
		t.Fatalf("%s over MCP answered no JSON: %q", tool, text)
	}
	return got, text, res.IsError
}

// state is what the tools could change, read from the database and the
// disk: the operations and box log events made, every snapshot and box with
// its state, and amber-fox's notes.txt.
type state struct {
	ops, events int
	snaps       map[string]string // ID: state, name, automatic
	boxes       map[string]string // ID: state, name, released
	notes       string
}

func (f *mcpFixture) state(t *testing.T) state {
	t.Helper()
	ctx := context.Background()
	s := state{snaps: map[string]string{}, boxes: map[string]string{}, notes: f.notes(t)}
	if err := f.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM operations), (SELECT count(*) FROM box_log)`).Scan(&s.ops, &s.events); err != nil {
		t.Fatal(err)
	}
	for q, m := range map[string]map[string]string{
		`SELECT id, state || ' ' || name || ' ' || automatic::text FROM snapshots`:                 s.snaps,
		`SELECT id, state || ' ' || name || ' ' || coalesce(released_at::text, 'here') FROM boxes`: s.boxes,
	} {
		rows, err := f.Pool.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id, v string
			if err := rows.Scan(&id, &v); err != nil {
				t.Fatal(err)
			}
			m[id] = v
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// lost says what of before is deleted or overwritten in after: a ready
// snapshot no longer ready, a box gone, amber-fox's notes rewritten.
func lost(before, after state) []string {
	var out []string
	for id, v := range before.snaps {
		if strings.HasPrefix(v, "ready ") && !strings.HasPrefix(after.snaps[id], "ready ") {
			out = append(out, "snapshot "+v)
		}
	}
	for id, v := range before.boxes {
		if _, ok := after.boxes[id]; !ok {
			out = append(out, "box "+v)
		}
	}
	if before.notes != after.notes {
		out = append(out, fmt.Sprintf("notes.txt %q became %q", before.notes, after.notes))
	}
	return out
}

// TestEveryToolOnMCP: every tool of the one table the JSON tools are
// served from is listed over MCP, with a description, the input schema
// openapi.json gives its JSON twin (the same parameters, the same required
// ones, no others), and its annotations.
func TestEveryToolOnMCP(t *testing.T) {
	t.Parallel()
	e := setup(t)
	token, _ := e.agent(t, "Fix the sign-in flow")
	ses, err := mcpSession(t, e.srv.URL, token)
	if err != nil {
		t.Fatal(err)
	}
	defer ses.Close()
	listed, err := ses.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tl := range listed.Tools {
		byName[tl.Name] = tl
	}
	doc := readOpenAPI(t, e)
	var raw map[string]any
	if err := json.Unmarshal(e.call(t, "GET", "/openapi.json", "", nil).must(t, 200).Raw, &raw); err != nil {
		t.Fatal(err)
	}
	schemas := raw["components"].(map[string]any)["schemas"].(map[string]any)
	ref := regexp.MustCompile(`"#/components/schemas/(\w+)"`)
	for _, name := range api.ToolNames() {
		tl, ok := byName[name]
		if !ok {
			t.Errorf("%s is not listed over MCP", name)
			continue
		}
		delete(byName, name)
		if tl.Description == "" || tl.Annotations == nil || tl.Annotations.DestructiveHint == nil || tl.Annotations.OpenWorldHint == nil {
			t.Errorf("%s is listed without its description or its annotations: %+v", name, tl)
			continue
		}
		var post struct {
			RequestBody json.RawMessage `json:"requestBody"`
		}
		if err := json.Unmarshal(doc.Paths["/tools/"+name]["post"], &post); err != nil {
			t.Fatalf("%s: openapi.json has no POST /tools/%s: %v", name, name, err)
		}
		m := ref.FindStringSubmatch(string(post.RequestBody))
		if m == nil {
			t.Fatalf("%s: openapi.json's request has no schema", name)
		}
		want := schemas[m[1]].(map[string]any)
		var got map[string]any
		b, _ := json.Marshal(tl.InputSchema)
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(sortedKeys(got["properties"]), sortedKeys(want["properties"])) ||
			!reflect.DeepEqual(sortedList(got["required"]), sortedList(want["required"])) || got["additionalProperties"] != false {
			t.Errorf("%s's schema over MCP is not openapi.json's %s:\nMCP     %s\nOpenAPI %v", name, m[1], b, want)
		}
	}
	for name := range byName {
		t.Errorf("MCP lists %s, which is no tool of the table", name)
	}
}

func sortedKeys(v any) []string {
	m, _ := v.(map[string]any)
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedList(v any) []string {
	l, _ := v.([]any)
	out := []string{}
	for _, x := range l {
		out = append(out, x.(string))
	}
	sort.Strings(out)
	return out
}

// TestToolAnnotationsTrue: each tool's annotations over MCP say what it
// does, checked by calling it for real over MCP and reading the database
// and the box's disk before and after: a read-only tool changes no row,
// no event and no file; any other changes something; a destructive one
// deletes or overwrites (a ready snapshot gone, the box's file rewritten)
// and the others never do; called again with the same arguments (no retry
// key), an idempotent one changes nothing more, and the others do.
func TestToolAnnotationsTrue(t *testing.T) {
	t.Parallel()
	f := newMCPFixture(t)
	listed, err := f.ses.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	hints := map[string]*mcp.ToolAnnotations{}
	for _, tl := range listed.Tools {
		hints[tl.Name] = tl.Annotations
	}
	for _, c := range f.script() {
		h := hints[c.tool]
		// The box's file is rewritten before each call, so a restore, a
		// reset or an undo has something to overwrite.
		f.writeNotes(t, "before "+c.tool)
		before := f.state(t)
		_, text, isErr := f.callMCP(t, c.tool, c.args)
		if isErr {
			t.Fatalf("%s refused: %s", c.tool, text)
		}
		after := f.state(t)
		changed := !reflect.DeepEqual(before, after)
		gone := lost(before, after)
		switch {
		case h.ReadOnlyHint && changed:
			t.Errorf("%s says it is read-only, and it changed %+v to %+v", c.tool, before, after)
		case !h.ReadOnlyHint && !changed:
			t.Errorf("%s says it is not read-only, and it changed nothing", c.tool)
		case *h.DestructiveHint && len(gone) == 0:
			t.Errorf("%s says it is destructive, and it deleted and overwrote nothing", c.tool)
		case !*h.DestructiveHint && len(gone) > 0:
			t.Errorf("%s says it is not destructive, and %v", c.tool, gone)
		}
		if *h.OpenWorldHint {
			t.Errorf("%s says it is open-world: no tool reaches beyond boxsnap's boxes", c.tool)
		}
		again := map[string]any{}
		for k, v := range c.args {
			if k != "request" {
				again[k] = v
			}
		}
		f.callMCP(t, c.tool, again)
		twice := f.state(t)
		more := !reflect.DeepEqual(after, twice)
		if h.IdempotentHint && more {
			t.Errorf("%s says it is idempotent, and called again it changed %+v to %+v", c.tool, after, twice)
		}
		if !h.IdempotentHint && !more {
			t.Errorf("%s says it is not idempotent, and called again it changed nothing", c.tool)
		}
	}
}
