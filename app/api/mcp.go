package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPPath is where the tools are served over the Model Context Protocol.
const MCPPath = "/mcp"

// MCP serves the agent tools over the Model Context Protocol's streamable
// HTTP transport, at /mcp. It is the same table as the JSON tools, called
// through the same routes: a tool call goes to /api/v1/tools/<name> with the
// caller's own token, so it is authenticated, bounded and answered exactly
// as a JSON call is (the same words, the same try_again). A call the tool
// refuses is a tool result with isError set and the JSON error as its text.
// Each request is stateless, with its own server: nothing of one caller
// outlives its request.
func MCP(opts Options) http.Handler {
	s := newServer(opts)
	api := s.routes()
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		srv := mcp.NewServer(&mcp.Implementation{Name: "boxsnap", Title: "boxsnap", Version: "1"},
			&mcp.ServerOptions{Instructions: skill, Logger: s.logger})
		for _, t := range tools {
			srv.AddTool(&mcp.Tool{Name: t.Name, Description: toolSummary(t.Name), InputSchema: toolSchema(t), Annotations: t.annotations()}, mcpCall(api, t.Name))
		}
		return srv
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: s.logger})
	// The caller is checked before MCP reads a byte: no token, no session.
	// A tool call waits for its operation as a JSON call does, past the
	// server's write timeout.
	bounded := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(ToolWait + time.Minute))
		h.ServeHTTP(w, r)
	})
	return s.authenticate(http.MaxBytesHandler(bounded, MaxBodyBytes))
}

// mcpCall calls one JSON tool through the API's routes with the MCP
// request's own Authorization header.
func mcpCall(api http.Handler, name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := []byte(req.Params.Arguments)
		if len(args) == 0 || string(args) == "null" {
			args = []byte("{}")
		}
		hr, err := http.NewRequestWithContext(ctx, http.MethodPost, "/tools/"+name, bytes.NewReader(args))
		if err != nil {
			return nil, err
		}
		hr.Header.Set("Content-Type", "application/json")
		if req.Extra != nil && req.Extra.Header != nil {
			hr.Header.Set("Authorization", req.Extra.Header.Get("Authorization"))
		}
		rec := &recorder{header: http.Header{}, status: http.StatusOK}
		api.ServeHTTP(rec, hr)
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.TrimSpace(rec.body.String())}}, IsError: rec.status >= 400}
		var structured map[string]any
		if json.Unmarshal(rec.body.Bytes(), &structured) == nil {
			res.StructuredContent = structured
		}
		return res, nil
	}
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
