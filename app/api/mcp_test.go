package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boxsnap/boxsnap/app/api"
	"github.com/boxsnap/boxsnap/app/coretest"
)

// bearer adds a token to every request of the MCP client.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.next.RoundTrip(r)
}

// mcpSession connects the official SDK's client to /mcp with token.
func mcpSession(t *testing.T, url, token string) (*mcp.ClientSession, error) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "boxsnap-test", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}, MaxRetries: -1}
	return client.Connect(context.Background(), tr, nil)
}

// TestMCPTools drives /mcp with the Model Context Protocol SDK's own client:
// every tool of the table the JSON tools are served from is listed and
// called, and each call answers what the same JSON call answers, refusals
// with the same words and try_again; the skill is the server's
// instructions; a call without a thread's token gets nothing.
func TestMCPTools(t *testing.T) {
	t.Parallel()
	e := coretest.New(t, coretest.Options{})
	r := chi.NewRouter()
	opts := api.Options{Core: e.Core, Tab: e.Tab, Boxes: e.Boxes, Contents: e.Contents, Approvals: e.Approvals, Pictures: e.Pictures, Auth: e.Auth, Logger: e.Logger}
	r.Mount("/api/v1", api.New(opts))
	r.Handle("/mcp", api.MCP(opts))
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	jsonEnv := &env{Env: e, srv: srv}

	token, agent := jsonEnv.agent(t, "Fix the sign-in flow")
	e.Box(t, agent, "amber-fox")

	if _, err := mcpSession(t, srv.URL, ""); err == nil {
		t.Fatal("an MCP client with no token connected")
	}
	if _, err := mcpSession(t, srv.URL, "bxa_not-a-token"); err == nil {
		t.Fatal("an MCP client with a wrong token connected")
	}
	ses, err := mcpSession(t, srv.URL, token)
	if err != nil {
		t.Fatal(err)
	}
	defer ses.Close()
	if got := ses.InitializeResult().Instructions; got != api.Skill() || !strings.Contains(got, "never") {
		t.Fatalf("the MCP server's instructions are not the skill: %q", got)
	}

	listed, err := ses.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range listed.Tools {
		names = append(names, tl.Name)
		if tl.Description == "" {
			t.Fatalf("tool %s has no description", tl.Name)
		}
	}
	want := api.ToolNames()
	sort.Strings(names)
	sorted := append([]string(nil), want...)
	sort.Strings(sorted)
	if !reflect.DeepEqual(names, sorted) {
		t.Fatalf("MCP lists %v, the JSON tools are %v", names, sorted)
	}

	// Each tool's arguments; a tool not named here is called with the box
	// alone, and must answer over MCP what it answers as JSON all the same.
	// Each change carries a request ID, so the JSON call after it is a
	// repeat that answers the same operation.
	args := map[string]map[string]any{
		"box_snapshot":        {"box": "amber-fox", "name": "before the migration", "request": "mcp-take"},
		"box_snapshots":       {"box": "amber-fox"},
		"box_restore":         {"box": "amber-fox", "snapshot": "before the migration", "replace": true, "request": "mcp-restore"},
		"box_fork":            {"box": "amber-fox", "snapshot": "before the migration", "name": "amber-fox-try", "request": "mcp-fork"},
		"box_snapshot_delete": {"box": "amber-fox", "snapshot": "before the migration", "request": "mcp-delete"},
		"box_reset":           {"box": "amber-fox", "keep_logins": true, "request": "mcp-reset"},
		"box_undo":            {"box": "amber-fox", "request": "mcp-undo"},
		"box_trash":           {},
		"box_trash_restore":   {"box": "brisk-lake", "request": "mcp-untrash"},
	}
	// The delete's JSON twin deletes another snapshot, so it is a first
	// delete too (a repeat answers the first; TestRepeatedDeleteAnswersItsResult),
	// and must answer in the same shape.
	jsonEnv.call(t, "POST", "/tools/box_snapshot", token, map[string]any{"box": "amber-fox", "name": "spare"}).must(t, 200)
	twin := map[string]map[string]any{
		"box_snapshot_delete": {"box": "amber-fox", "snapshot": "spare", "request": "json-delete"},
	}
	// A box of the thread in the trash, for box_trash and box_trash_restore.
	e.Box(t, agent, "brisk-lake")
	jsonEnv.call(t, "POST", "/boxes/brisk-lake/release?wait=true", token, nil).must(t, 200)
	for _, name := range want {
		a, ok := args[name]
		if !ok {
			a = map[string]any{"box": "amber-fox"}
		}
		ja := a
		if tw, ok := twin[name]; ok {
			ja = tw
		}
		res, err := ses.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: a})
		if err != nil {
			t.Fatalf("%s over MCP: %v", name, err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		var viaMCP map[string]any
		if err := json.Unmarshal([]byte(text), &viaMCP); err != nil {
			t.Fatalf("%s over MCP answered no JSON: %q", name, text)
		}
		viaJSON := jsonEnv.call(t, "POST", "/tools/"+name, token, ja)
		if _, ok := twin[name]; ok {
			if !reflect.DeepEqual(keys(viaMCP), keys(viaJSON.JSON)) || viaJSON.Status != 200 {
				t.Fatalf("%s answers differently:\nMCP  %s\nJSON %s", name, text, viaJSON.Raw)
			}
		} else if !reflect.DeepEqual(viaMCP, viaJSON.JSON) {
			t.Fatalf("%s answers differently:\nMCP  %s\nJSON %s", name, text, viaJSON.Raw)
		}
		if res.IsError != (viaJSON.Status >= 400) {
			t.Fatalf("%s: isError %v, JSON status %d", name, res.IsError, viaJSON.Status)
		}
		if _, listedByUs := args[name]; listedByUs && res.IsError {
			t.Fatalf("%s over MCP refused: %s", name, text)
		}
	}

	// A refusal: the same words and try_again, with isError.
	res, err := ses.CallTool(context.Background(), &mcp.CallToolParams{Name: "box_restore", Arguments: map[string]any{"box": "amber-fox", "snapshot": "nothing like it", "replace": true}})
	if err != nil {
		t.Fatal(err)
	}
	viaJSON := jsonEnv.call(t, "POST", "/tools/box_restore", token, map[string]any{"box": "amber-fox", "snapshot": "nothing like it", "replace": true})
	if !res.IsError || res.Content[0].(*mcp.TextContent).Text != strings.TrimSpace(string(viaJSON.Raw)) || !strings.Contains(string(viaJSON.Raw), `"try_again":false`) {
		t.Fatalf("a refusal over MCP: %+v, as JSON: %s", res.Content[0], viaJSON.Raw)
	}

	// Another thread's agent sees none of it over MCP either.
	other, _ := jsonEnv.agent(t, "Another thread")
	ses2, err := mcpSession(t, srv.URL, other)
	if err != nil {
		t.Fatal(err)
	}
	defer ses2.Close()
	res, err = ses2.CallTool(context.Background(), &mcp.CallToolParams{Name: "box_snapshot", Arguments: map[string]any{"box": "amber-fox"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "No box amber-fox that you can see.") {
		t.Fatalf("another thread over MCP: %+v", res.Content[0])
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
