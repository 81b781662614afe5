package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boxsnap/boxsnap/app/api"
	"github.com/boxsnap/boxsnap/app/api/mcptools"
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
	op    string         // the ID of the agent's take of "before the migration"
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
	f.op = e.call(t, "POST", "/tools/box_snapshot", token, map[string]any{"box": "amber-fox", "name": "before the migration"}).must(t, 200).str("operation")
	f.writeNotes(t, "the second notes")
	op, sn, err := e.Take.TakeAutomatic(context.Background(), f.box.ID, "the box changed")
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
		{"box_head", map[string]any{"box": "amber-fox", "snapshot": "before the migration", "request": "k-head"}},
		{"box_operation", map[string]any{"operation": f.op, "wait": 1}},
		{"box_snapshot", map[string]any{"box": "amber-fox", "name": "spare", "request": "k-take"}},
		{"box_snapshot_save", map[string]any{"box": "amber-fox", "snapshot": f.auto, "name": "a moment kept", "request": "k-save"}},
		{"box_snapshot_unsave", map[string]any{"box": "amber-fox", "snapshot": "spare", "request": "k-unsave"}},
		{"box_fork", map[string]any{"box": "amber-fox", "snapshot": "before the migration", "request": "k-fork"}},
		{"box_make", map[string]any{"template": "blank", "request": "k-make"}},
		{"box_trash_restore", map[string]any{"box": "brisk-lake", "request": "k-untrash"}},
		{"box_release", map[string]any{"box": "brisk-lake", "request": "k-release"}},
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
// snapshot no longer ready, a box gone or a ready one no longer ready (a
// release: in the trash, then destroyed), amber-fox's notes rewritten.
func lost(before, after state) []string {
	var out []string
	for id, v := range before.snaps {
		if strings.HasPrefix(v, "ready ") && !strings.HasPrefix(after.snaps[id], "ready ") {
			out = append(out, "snapshot "+v)
		}
	}
	for id, v := range before.boxes {
		if a, ok := after.boxes[id]; !ok || strings.HasPrefix(v, "ready ") && !strings.HasPrefix(a, "ready ") {
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
// openapi.json gives its JSON twin (the same parameters, each with the
// description openapi.json gives it, the same required ones, no others),
// and its annotations; and every tool openapi.json documents is there.
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
		// Each parameter carries the words openapi.json gives it.
		gotProps, _ := got["properties"].(map[string]any)
		for p, w := range want["properties"].(map[string]any) {
			wd, _ := w.(map[string]any)["description"].(string)
			gp, _ := gotProps[p].(map[string]any)
			if gd, _ := gp["description"].(string); gd != wd {
				t.Errorf("%s's parameter %s over MCP says %q; openapi.json's %s says %q", name, p, gd, m[1], wd)
			}
		}
	}
	for name := range byName {
		t.Errorf("MCP lists %s, which is no tool of the table", name)
	}
	// And every tool openapi.json documents is one of the table, so on MCP.
	for p := range doc.Paths {
		name, ok := strings.CutPrefix(p, "/tools/")
		if ok && name != "{tool}" && !slices.Contains(api.ToolNames(), name) {
			t.Errorf("openapi.json documents the tool %s, which is not on MCP", name)
		}
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

// mcpError calls a tool over MCP that must refuse, and answers its code
// as the MCP result's structured content carries it, and its text.
func (f *mcpFixture) mcpError(t *testing.T, ses *mcp.ClientSession, tool string, args map[string]any) (string, string) {
	t.Helper()
	res, err := ses.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s over MCP: %v", tool, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !res.IsError {
		t.Fatalf("%s over MCP did not refuse: %s", tool, text)
	}
	sc, _ := res.StructuredContent.(map[string]any)
	e, _ := sc["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code, text
}

// snapshotCount is how many snapshots amber-fox has, in any state.
func (f *mcpFixture) snapshotCount(t *testing.T) int {
	t.Helper()
	var n int
	if err := f.Pool.QueryRow(context.Background(), `SELECT count(*) FROM snapshots WHERE box_id = $1`, f.box.ID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRetryKey: a changing tool's request is a retry key, over MCP and
// JSON alike. The same key with the same arguments answers the first
// call's answer and does nothing again, from a new API server too (the
// answer is kept in PostgreSQL, not in the server); with other arguments,
// or from another tool, it is refused with request_reused and changes
// nothing; a refusal keeps nothing, so the key then does the work; the box
// and the snapshot named by their IDs are the same call as by their names.
func TestRetryKey(t *testing.T) {
	t.Parallel()
	f := newMCPFixture(t)
	args := map[string]any{"box": "amber-fox", "name": "before the upgrade", "request": "rk-1"}
	first, text, isErr := f.callMCP(t, "box_snapshot", args)
	if isErr {
		t.Fatalf("box_snapshot refused: %s", text)
	}
	n := f.snapshotCount(t)
	again := f.call(t, "POST", "/tools/box_snapshot", f.token, args).must(t, 200)
	if !reflect.DeepEqual(first, again.JSON) || f.snapshotCount(t) != n {
		t.Fatalf("the retry as JSON answered %s (first %s) with %d snapshots (first %d)", again.Raw, text, f.snapshotCount(t), n)
	}

	// A new API server over the same database: the key is still kept.
	aopts := f.APIOptions()
	r := chi.NewRouter()
	r.Mount("/api/v1", api.New(aopts))
	r.Handle(mcptools.MCPPath, mcptools.MCP(aopts))
	srv2 := httptest.NewServer(r)
	t.Cleanup(srv2.Close)
	ses2, err := mcpSession(t, srv2.URL, f.token)
	if err != nil {
		t.Fatal(err)
	}
	defer ses2.Close()
	res, err := ses2.CallTool(context.Background(), &mcp.CallToolParams{Name: "box_snapshot", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != text || res.IsError || f.snapshotCount(t) != n {
		t.Fatalf("the retry on a new server answered %s (first %s) with %d snapshots (first %d)", got, text, f.snapshotCount(t), n)
	}

	// The key with other arguments, or from another tool: refused with its
	// own code, nothing taken or deleted.
	other := map[string]any{"box": "amber-fox", "name": "something else", "request": "rk-1"}
	code, words := f.mcpError(t, f.ses, "box_snapshot", other)
	if code != "request_reused" || !strings.Contains(words, "The request ID rk-1 was used for another call (box_snapshot with other arguments)") {
		t.Fatalf("the key with other arguments over MCP: %s", words)
	}
	j := f.call(t, "POST", "/tools/box_snapshot", f.token, other).must(t, 409)
	if j.errorCode() != "request_reused" {
		t.Fatalf("the key with other arguments as JSON: %s", j.Raw)
	}
	code, words = f.mcpError(t, f.ses, "box_snapshot_delete", map[string]any{"box": "amber-fox", "snapshot": "before the upgrade", "request": "rk-1"})
	if code != "request_reused" || !strings.Contains(words, "(box_snapshot)") {
		t.Fatalf("the key from another tool: %s", words)
	}
	if f.snapshotCount(t) != n {
		t.Fatalf("a refused key changed the snapshots: %d, were %d", f.snapshotCount(t), n)
	}

	// A refusal keeps nothing: the key then does the work.
	code, _ = f.mcpError(t, f.ses, "box_snapshot", map[string]any{"box": "amber-foz", "request": "rk-2"})
	if code != "not_found" {
		t.Fatalf("a made-up box answered %s", code)
	}
	if _, text, isErr := f.callMCP(t, "box_snapshot", map[string]any{"box": "amber-fox", "request": "rk-2"}); isErr || f.snapshotCount(t) != n+1 {
		t.Fatalf("the key after a refusal: %s", text)
	}

	// A release by its key: the retry as JSON answers the first release,
	// and the key on another box is refused, that box left as it was.
	f.call(t, "POST", "/tools/box_trash_restore", f.token, map[string]any{"box": "brisk-lake"}).must(t, 200)
	rel := map[string]any{"box": "brisk-lake", "request": "rk-4"}
	released, text, isErr := f.callMCP(t, "box_release", rel)
	if isErr {
		t.Fatalf("box_release refused: %s", text)
	}
	ops := f.state(t).ops
	if again := f.call(t, "POST", "/tools/box_release", f.token, rel).must(t, 200); !reflect.DeepEqual(released, again.JSON) || f.state(t).ops != ops {
		t.Fatalf("the release's retry as JSON answered %s (first %s)", again.Raw, text)
	}
	if code, _ := f.mcpError(t, f.ses, "box_release", map[string]any{"box": "amber-fox", "request": "rk-4"}); code != "request_reused" {
		t.Fatalf("the release's key on another box answered %s", code)
	}
	if b, err := f.Core.Box(context.Background(), snapshots.Owner(), f.box.ID); err != nil || b.State != snapshots.BoxReady {
		t.Fatalf("a refused release key changed amber-fox: %+v (%v)", b, err)
	}

	// The snapshot by its ID is the same call as by its name.
	restore := map[string]any{"box": "amber-fox", "snapshot": "before the migration", "replace": true, "request": "rk-3"}
	done, text, isErr := f.callMCP(t, "box_restore", restore)
	if isErr {
		t.Fatalf("box_restore refused: %s", text)
	}
	var id string
	if err := f.Pool.QueryRow(context.Background(), `SELECT id FROM snapshots WHERE box_id = $1 AND name = 'before the migration'`, f.box.ID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	byID := f.call(t, "POST", "/tools/box_restore", f.token, map[string]any{"box": f.box.ID, "snapshot": id, "replace": true, "request": "rk-3"}).must(t, 200)
	if !reflect.DeepEqual(done, byID.JSON) {
		t.Fatalf("the restore by IDs answered %s, by names %s", byID.Raw, text)
	}
}

// TestErrorCodesListed: every code the API can refuse with (the core's
// and its own) is listed in the skill and in openapi.json's Error.code,
// and a refusal over MCP carries its code, the JSON tool's.
func TestErrorCodesListed(t *testing.T) {
	t.Parallel()
	f := newMCPFixture(t)
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Properties map[string]struct {
						Enum        []string `json:"enum"`
						Description string   `json:"description"`
					} `json:"properties"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(f.call(t, "GET", "/openapi.json", "", nil).must(t, 200).Raw, &doc); err != nil {
		t.Fatal(err)
	}
	code := doc.Components.Schemas["Error"].Properties["error"].Properties["code"]
	for _, c := range api.Codes() {
		word := regexp.MustCompile(`\b` + string(c) + `\b`)
		if !word.MatchString(api.Skill()) {
			t.Errorf("the skill does not list the code %s", c)
		}
		if !word.MatchString(code.Description) || !slicesContains(code.Enum, string(c)) {
			t.Errorf("openapi.json's Error.code does not list %s: %v %q", c, code.Enum, code.Description)
		}
	}
	for _, c := range []struct {
		tool string
		args map[string]any
		code string
	}{
		{"box_snapshot", map[string]any{"box": "amber-foz"}, "not_found"},
		{"box_snapshot_file", map[string]any{"box": "amber-fox", "snapshot": "before the migration", "path": 7}, "invalid"},
		{"box_snapshot", map[string]any{"box": "amber-fox", "name": "one", "request": "ec-1"}, ""},
		{"box_snapshot", map[string]any{"box": "amber-fox", "name": "two", "request": "ec-1"}, "request_reused"},
	} {
		if c.code == "" {
			f.callMCP(t, c.tool, c.args)
			continue
		}
		got, text := f.mcpError(t, f.ses, c.tool, c.args)
		viaJSON := f.call(t, "POST", "/tools/"+c.tool, f.token, c.args)
		if got != c.code || viaJSON.errorCode() != c.code {
			t.Errorf("%s %v: over MCP code %q (%s), as JSON %q; want %s", c.tool, c.args, got, text, viaJSON.errorCode(), c.code)
		}
	}
}

func slicesContains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// TestNewToolsKeepThreads: the tools that look inside snapshots, read
// lineages, choose a head, list or make boxes and release one reach only the agent's own thread's:
// another thread's box reads exactly as a made-up name does, another
// thread's snapshot ID exactly as a guessed one, a path out of the
// snapshot reads nothing outside it, and a box made is seen by its own
// thread alone.
func TestNewToolsKeepThreads(t *testing.T) {
	t.Parallel()
	f := newMCPFixture(t)
	otherToken, otherAgent := f.agent(t, "Another thread")
	f.Box(t, otherAgent, "cold-pine")
	f.call(t, "POST", "/tools/box_snapshot", otherToken, map[string]any{"box": "cold-pine", "name": "theirs"}).must(t, 200)
	var theirs string
	if err := f.Pool.QueryRow(context.Background(), `SELECT id FROM snapshots WHERE name = 'theirs'`).Scan(&theirs); err != nil {
		t.Fatal(err)
	}
	const guessed = "snaaaaaaaaaaaa"
	if !snapshots.ValidID(snapshots.PrefixSnapshot, guessed) {
		t.Fatalf("%s is no snapshot ID", guessed)
	}
	same := func(tool string, real, madeUp map[string]any, realName, madeUpName string) {
		t.Helper()
		code, words := f.mcpError(t, f.ses, tool, real)
		code2, words2 := f.mcpError(t, f.ses, tool, madeUp)
		if code != "not_found" || code != code2 || words != strings.ReplaceAll(words2, madeUpName, realName) {
			t.Errorf("%s: another thread's %s reads %s %s, a made-up %s reads %s %s", tool, realName, code, words, madeUpName, code2, words2)
		}
	}
	for _, tool := range []string{"box_snapshot_files", "box_snapshot_file", "box_lineage", "box_head"} {
		with := func(box, snapshot string) map[string]any {
			a := map[string]any{"box": box, "snapshot": snapshot}
			if tool != "box_lineage" && tool != "box_head" {
				a["path"] = "notes.txt"
			}
			return a
		}
		same(tool, with("cold-pine", "theirs"), with("cold-pinf", "theirs"), "cold-pine", "cold-pinf")
		same(tool, with("amber-fox", theirs), with("amber-fox", guessed), theirs, guessed)
	}
	same("box_lineage", map[string]any{"box": "cold-pine"}, map[string]any{"box": "cold-pinf"}, "cold-pine", "cold-pinf")

	// Another thread's box is never released, nor its release planned, by
	// its name or its ID: each reads as a made-up name does.
	if !snapshots.ValidID(snapshots.PrefixBox, "bxzzzzzzzzzzzz") {
		t.Fatal("bxzzzzzzzzzzzz is no box ID")
	}
	var pineID string
	if err := f.Pool.QueryRow(context.Background(), `SELECT id FROM boxes WHERE name = 'cold-pine'`).Scan(&pineID); err != nil {
		t.Fatal(err)
	}
	for _, dry := range []bool{true, false} {
		same("box_release", map[string]any{"box": "cold-pine", "dry_run": dry}, map[string]any{"box": "cold-pinf", "dry_run": dry}, "cold-pine", "cold-pinf")
		same("box_release", map[string]any{"box": pineID, "dry_run": dry, "request": "rel-theirs"}, map[string]any{"box": "bxzzzzzzzzzzzz", "dry_run": dry, "request": "rel-theirs"}, pineID, "bxzzzzzzzzzzzz")
	}
	if b, err := f.Core.Box(context.Background(), snapshots.Owner(), pineID); err != nil || b.State != snapshots.BoxReady {
		t.Fatalf("another thread's release changed cold-pine: %+v (%v)", b, err)
	}

	// A path out of the snapshot reads nothing outside it.
	for _, c := range []struct{ tool, path string }{
		{"box_snapshot_files", ".."}, {"box_snapshot_files", "../.."}, {"box_snapshot_file", "../../../../etc/passwd"},
		{"box_snapshot_file", "/etc/passwd"}, {"box_snapshot_files", "/etc"},
	} {
		res, err := f.ses.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool,
			Arguments: map[string]any{"box": "amber-fox", "snapshot": "before the migration", "path": c.path}})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if strings.Contains(text, "root:") || strings.Contains(text, "passwd") && !res.IsError {
			t.Errorf("%s %q reads outside the snapshot: %s", c.tool, c.path, text)
		}
		if !res.IsError && c.tool == "box_snapshot_files" && !strings.Contains(text, "notes.txt") {
			t.Errorf("%s %q lists something other than the snapshot's top: %s", c.tool, c.path, text)
		}
	}

	// A box made is its own thread's: the other thread's box_list never
	// shows it, and shows only its own.
	made, text, isErr := f.callMCP(t, "box_make", map[string]any{"template": "blank", "name": "new-wren"})
	if isErr || made["name"] != "new-wren" {
		t.Fatalf("box_make: %s", text)
	}
	a := f.call(t, "POST", "/tools/box_list", otherToken, map[string]any{}).must(t, 200)
	var names []string
	for _, b := range a.JSON["boxes"].([]any) {
		names = append(names, b.(map[string]any)["name"].(string))
	}
	if !reflect.DeepEqual(names, []string{"cold-pine"}) {
		t.Fatalf("the other thread's box_list shows %v", names)
	}
}
