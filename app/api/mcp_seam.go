package api

import (
	"io"
	"log/slog"
	"net/http"
)

// This file is what package mcptools, which serves the agent tools over
// MCP, reaches of the API: the one tool table, the gate a JSON tool call
// goes through, the token check and the routes. MCP lives in a package of
// its own, so app/api stays the JSON API's routes and their tools; it
// imports app/api, never the reverse.

// ToolDef is one agent tool of the table (tools.go), as MCP serves it.
type ToolDef = toolDef

// CallerKey is the context key under which authenticate puts the caller
// its token named.
type CallerKey = callerKey

// ToolTable is the agent tools' one table, in its order: the JSON tools
// and MCP serve the same tools.
func ToolTable() []ToolDef { return tools }

// OpenAPI is the OpenAPI 3 document of every route, whose summaries are
// the tools' descriptions.
func OpenAPI() []byte { return openAPI }

// ErrReader answers err once the body read before it is spent (as a
// tool's body read does), so that a body cut short stays cut short.
func ErrReader(err error) io.Reader { return errReader{err} }

// Gate is the API as MCP reaches it: a tool call runs through the same
// gate as a JSON call, a caller is checked by the same token check, and a
// call whose caller is not yet known goes through the same routes.
type Gate struct{ s *server }

// NewGate holds opts for MCP's tool calls, as New does for the JSON API's.
func NewGate(opts Options) *Gate { return &Gate{s: newServer(opts)} }

// ToolGate runs an agent's tool call as a JSON call runs (toolGate).
func (g *Gate) ToolGate(t ToolDef, w http.ResponseWriter, r *http.Request) { g.s.toolGate(t, w, r) }

// Authenticate checks the caller's token before next runs.
func (g *Gate) Authenticate(next http.Handler) http.Handler { return g.s.authenticate(next) }

// Routes is the API's route table, mounted at /api/v1.
func (g *Gate) Routes() http.Handler { return g.s.routes() }

// Logger is the logger the API logs to.
func (g *Gate) Logger() *slog.Logger { return g.s.logger }
