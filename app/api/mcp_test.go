package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boxsnap/boxsnap/app/api"
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
// called for real (a real box with real files and snapshots, each tool
// with the arguments that make it do its work), and each answers over MCP
// what the same JSON call answers; a change carries its retry key, so its
// JSON twin is the retry that answers the first call's answer. Refusals
// carry the same words, try_again and code; the skill is the server's
// instructions; a call without a thread's token gets nothing.
func TestMCPTools(t *testing.T) {
	t.Parallel()
	f := newMCPFixture(t)
	if _, err := mcpSession(t, f.srv.URL, ""); err == nil {
		t.Fatal("an MCP client with no token connected")
	}
	if _, err := mcpSession(t, f.srv.URL, "bxa_not-a-token"); err == nil {
		t.Fatal("an MCP client with a wrong token connected")
	}
	if got := f.ses.InitializeResult().Instructions; got != api.Skill() || !strings.Contains(got, "never") {
		t.Fatalf("the MCP server's instructions are not the skill: %q", got)
	}

	called := map[string]bool{}
	for _, c := range f.script() {
		viaMCP, text, isErr := f.callMCP(t, c.tool, c.args)
		if isErr {
			t.Fatalf("%s over MCP refused: %s", c.tool, text)
		}
		viaJSON := f.call(t, "POST", "/tools/"+c.tool, f.token, c.args)
		if viaJSON.Status >= 300 || !reflect.DeepEqual(viaMCP, viaJSON.JSON) {
			t.Fatalf("%s answers differently:\nMCP  %s\nJSON %d %s", c.tool, text, viaJSON.Status, viaJSON.Raw)
		}
		called[c.tool] = true
	}
	for _, name := range api.ToolNames() {
		if !called[name] {
			t.Errorf("%s was not called over MCP", name)
		}
	}

	// A refusal: the same words, try_again and code, with isError.
	args := map[string]any{"box": "amber-fox", "snapshot": "nothing like it", "replace": true}
	viaMCP, text, isErr := f.callMCP(t, "box_restore", args)
	viaJSON := f.call(t, "POST", "/tools/box_restore", f.token, args)
	if !isErr || text != strings.TrimSpace(string(viaJSON.Raw)) || viaJSON.errorCode() != "not_found" ||
		!strings.Contains(text, `"try_again":false`) || !reflect.DeepEqual(viaMCP, viaJSON.JSON) {
		t.Fatalf("a refusal over MCP: %s, as JSON: %s", text, viaJSON.Raw)
	}

	// Another thread's agent sees none of it over MCP either.
	other, _ := f.agent(t, "Another thread")
	ses2, err := mcpSession(t, f.srv.URL, other)
	if err != nil {
		t.Fatal(err)
	}
	defer ses2.Close()
	res, err := ses2.CallTool(context.Background(), &mcp.CallToolParams{Name: "box_snapshot", Arguments: map[string]any{"box": "amber-fox"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "No box amber-fox that you can see.") {
		t.Fatalf("another thread over MCP: %+v", res.Content[0])
	}
}

// TestMCPDirectCallIsTheSDKs: a tools/call the API answers itself (the
// protocol version it knows, no progress token) answers exactly what the
// SDK answers for the same call (one with a progress token, which the SDK
// takes), its successes and its refusals alike.
func TestMCPDirectCallIsTheSDKs(t *testing.T) {
	t.Parallel()
	e := setup(t)
	token, agent := e.agent(t, "Fix the sign-in flow")
	e.Box(t, agent, "amber-fox")
	post := func(tool string, args map[string]any, progress bool) map[string]any {
		t.Helper()
		meta := map[string]any{
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "1"},
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		}
		if progress {
			meta["progressToken"] = "p-1"
		}
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call",
			"params": map[string]any{"_meta": meta, "name": tool, "arguments": args}})
		req, _ := http.NewRequest("POST", e.srv.URL+"/mcp", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", tool)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		var got map[string]any
		if res.StatusCode != 200 || json.Unmarshal(raw, &got) != nil {
			t.Fatalf("%s answered %d %s", tool, res.StatusCode, raw)
		}
		return got
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"box_list", map[string]any{}},
		{"box_snapshots", map[string]any{"box": "amber-fox"}},
		{"box_snapshot", map[string]any{"box": "nothing-here"}},
		{"box_trash", nil},
	} {
		direct, sdk := post(c.tool, c.args, false), post(c.tool, c.args, true)
		if !reflect.DeepEqual(direct, sdk) {
			t.Errorf("%s answered directly:\n%v\nand by the SDK:\n%v", c.tool, direct, sdk)
		}
	}
}
