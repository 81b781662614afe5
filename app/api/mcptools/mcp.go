package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	jsonapi "github.com/boxsnap/boxsnap/app/api"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// MCPPath is where the tools are served over the Model Context Protocol.
const MCPPath = "/mcp"

// MCP serves the agent tools over the Model Context Protocol's streamable
// HTTP transport, at /mcp. It is the same table as the JSON tools, run
// through the same gate: the caller is authenticated from its token
// before MCP reads a byte, and each tool call is answered exactly as its
// JSON call is (the same words, try_again and code), with each tool's
// annotations saying what it does. A call the tool refuses is a tool
// result with isError set and the JSON error as its text and structured
// content. Each request is stateless: nothing of one caller outlives its
// request. The one MCP server, its tools and their schemas, is made once
// and serves every request (a server made per request, its schemas read
// again from openapi.json, made a call over MCP some 40 times slower than
// the JSON call); it holds no caller, as each call carries its own token.
// The commonest request, one tools/call, is answered by directToolCall.
func MCP(opts jsonapi.Options) http.Handler {
	s := newServer(opts)
	api := s.routes()
	impl := &mcp.Implementation{Name: "boxsnap", Title: "boxsnap", Version: "1"}
	srv := mcp.NewServer(impl,
		&mcp.ServerOptions{Instructions: skill, Logger: s.logger})
	for _, t := range tools {
		srv.AddTool(&mcp.Tool{Name: t.Name, Description: toolSummary(t.Name), InputSchema: toolSchema(t), Annotations: t.Annotations()}, s.mcpCall(api, t))
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: s.logger})
	// The caller is checked before MCP reads a byte: no token, no session.
	// A tool call waits for its operation as a JSON call does, past the
	// server's write timeout.
	bounded := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(jsonapi.ToolWait + time.Minute))
		if s.directToolCall(w, r, impl) {
			return
		}
		h.ServeHTTP(w, r)
	})
	return s.authenticate(http.MaxBytesHandler(bounded, jsonapi.MaxBodyBytes))
}

// mcpCall calls one JSON tool for an MCP tool call. The caller the MCP
// request's token named is in ctx when the SDK runs the tool within that
// request: the tool then runs at once, through the same gate as a JSON
// call, without reading the token again. Otherwise the call goes through
// the API's routes with the MCP request's own Authorization header.
func (s *server) mcpCall(api http.Handler, t toolDef) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if _, ok := ctx.Value(callerKey{}).(snapshots.Caller); ok {
			return s.runForMCP(ctx, t, req.Params.Arguments), nil
		}
		hr, err := http.NewRequestWithContext(ctx, http.MethodPost, "/tools/"+t.Name, bytes.NewReader(argsOrEmpty(req.Params.Arguments)))
		if err != nil {
			return nil, err
		}
		hr.Header.Set("Content-Type", "application/json")
		if req.Extra != nil && req.Extra.Header != nil {
			hr.Header.Set("Authorization", req.Extra.Header.Get("Authorization"))
		}
		rec := &recorder{header: http.Header{}, status: http.StatusOK}
		api.ServeHTTP(rec, hr)
		return toolResult(rec), nil
	}
}

// runForMCP runs t for an MCP call whose caller ctx holds, through the
// same gate as a JSON call.
func (s *server) runForMCP(ctx context.Context, t toolDef, args json.RawMessage) *mcp.CallToolResult {
	hr, _ := http.NewRequestWithContext(ctx, http.MethodPost, "/tools/"+t.Name, bytes.NewReader(argsOrEmpty(args)))
	hr.Header.Set("Content-Type", "application/json")
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	s.toolGate(t, rec, hr)
	return toolResult(rec)
}

// argsOrEmpty is a call's arguments, {} when it sent none.
func argsOrEmpty(args json.RawMessage) []byte {
	if len(args) == 0 || string(args) == "null" {
		return []byte("{}")
	}
	return args
}

// toolResult is a JSON tool's answer as an MCP tool result: its JSON as
// text and as structured content, isError when it refused.
func toolResult(rec *recorder) *mcp.CallToolResult {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.TrimSpace(rec.body.String())}}, IsError: rec.status >= 400}
	var structured map[string]any
	if json.Unmarshal(rec.body.Bytes(), &structured) == nil {
		res.StructuredContent = structured
	}
	return res
}

// recorder keeps a routed tool call's answer.
type recorder struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if !r.wrote {
		r.status, r.wrote = status, true
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.body.Write(b)
}
