package mcptools

import (
	"log/slog"
	"net/http"

	"github.com/boxsnap/boxsnap/app/api"
)

// toolDef is one agent tool of the API's one table.
type toolDef = api.ToolDef

// callerKey is where the API's token check puts the caller.
type callerKey = api.CallerKey

// The API's one tool table and the skill, which MCP serves as they are.
var (
	tools = api.ToolTable()
	skill = api.Skill()
)

// gate is what MCP needs of the API: its gate, token check and routes,
// which *api.Gate answers.
type gate interface {
	ToolGate(t api.ToolDef, w http.ResponseWriter, r *http.Request)
	Authenticate(next http.Handler) http.Handler
	Routes() http.Handler
}

// server is MCP's hold on the API: a tool call goes through the API's own
// gate, so it is answered exactly as its JSON call is.
type server struct {
	gate   gate
	logger *slog.Logger
}

// newServer holds opts for MCP's tool calls.
func newServer(opts api.Options) *server {
	g := api.NewGate(opts)
	return &server{gate: g, logger: g.Logger()}
}

func (s *server) toolGate(t toolDef, w http.ResponseWriter, r *http.Request) {
	s.gate.ToolGate(t, w, r)
}

func (s *server) authenticate(next http.Handler) http.Handler { return s.gate.Authenticate(next) }

func (s *server) routes() http.Handler { return s.gate.Routes() }
