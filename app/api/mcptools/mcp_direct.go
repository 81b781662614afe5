package mcptools

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boxsnap/boxsnap/app/api"
)

// directProtocol is the MCP protocol version whose tools/call directToolCall
// answers itself; a call of any other version goes to the SDK.
const directProtocol = "2026-07-28"

// directToolCall answers the one request agents send most, a single
// tools/call of a tool of the table in the protocol version directProtocol
// names, without the SDK's session of one request: the SDK would make a
// session, its connection and its goroutines for each stateless request,
// which made a call over MCP some 40 % slower than the JSON call. The
// answer is the one the SDK writes for it: the same result, with the
// server's name in its _meta and resultType complete. Anything else (a
// batch, another method, a progress token, another version, a request the
// SDK would refuse) it leaves to the SDK, and answers false.
func (s *server) directToolCall(w http.ResponseWriter, r *http.Request, impl *mcp.Implementation) bool {
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Protocol-Version") != directProtocol || !accepts(r) || rebound(r) {
		return false
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return false
	}
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), api.ErrReader(err)))
	if err != nil || !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		return false
	}
	var msg struct {
		JSONRPC string                     `json:"jsonrpc"`
		ID      json.RawMessage            `json:"id"`
		Method  string                     `json:"method"`
		Params  map[string]json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.JSONRPC != "2.0" || msg.Method != "tools/call" || !plainID(msg.ID) {
		return false
	}
	var name string
	var meta map[string]json.RawMessage
	for k, v := range msg.Params {
		switch k {
		case "name":
			if json.Unmarshal(v, &name) != nil {
				return false
			}
		case "_meta":
			if json.Unmarshal(v, &meta) != nil {
				return false
			}
		case "arguments":
		default:
			return false
		}
	}
	var version string
	if json.Unmarshal(meta["io.modelcontextprotocol/protocolVersion"], &version) != nil || version != directProtocol ||
		meta["io.modelcontextprotocol/clientInfo"] == nil || meta["progressToken"] != nil {
		return false
	}
	t, ok := toolNamed(name)
	if !ok {
		return false
	}
	args := msg.Params["arguments"]
	if len(args) > 0 && !bytes.HasPrefix(bytes.TrimSpace(args), []byte("{")) && string(args) != "null" {
		return false
	}
	hr, _ := http.NewRequestWithContext(r.Context(), http.MethodPost, "/tools/"+t.Name, bytes.NewReader(argsOrEmpty(args)))
	hr.Header.Set("Content-Type", "application/json")
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	s.toolGate(t, rec, hr)
	out, err := directResult(msg.ID, impl, rec)
	if err != nil {
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	_, _ = w.Write(out)
	return true
}

// directResult is the JSON-RPC answer of a tool call, written as the SDK
// writes it (toolResult): the tool's JSON answer as text and, as it is, as
// structured content; isError when it refused.
func directResult(id json.RawMessage, impl *mcp.Implementation, rec *recorder) ([]byte, error) {
	answer := bytes.TrimSpace(rec.body.Bytes())
	text, err := json.Marshal(string(answer))
	if err != nil {
		return nil, err
	}
	server, err := json.Marshal(impl)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(bytes.TrimSpace(id))
	b.WriteString(`,"result":{"_meta":{"` + mcp.MetaKeyServerInfo + `":`)
	b.Write(server)
	b.WriteString(`},"content":[{"type":"text","text":`)
	b.Write(text)
	b.WriteString(`}]`)
	if bytes.HasPrefix(answer, []byte("{")) && json.Valid(answer) {
		b.WriteString(`,"structuredContent":`)
		b.Write(answer)
	}
	if rec.status >= 400 {
		b.WriteString(`,"isError":true`)
	}
	b.WriteString(`,"resultType":"complete"}}`)
	return b.Bytes(), nil
}

// plainID is a JSON-RPC request's ID: a string or a number.
func plainID(id json.RawMessage) bool {
	id = bytes.TrimSpace(id)
	return len(id) > 0 && (id[0] == '"' || id[0] == '-' || (id[0] >= '0' && id[0] <= '9'))
}

// accepts says whether the request accepts both answers the transport may
// give, as the SDK requires.
func accepts(r *http.Request) bool {
	var j, e bool
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := mime.ParseMediaType(strings.TrimSpace(part))
			j = j || mt == "application/json" || mt == "application/*" || mt == "*/*"
			e = e || mt == "text/event-stream" || mt == "text/*" || mt == "*/*"
		}
	}
	return j && e
}

// rebound is a request to a loopback address under another host's name,
// which the SDK refuses (DNS rebinding).
func rebound(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ok && local != nil && loopback(local.String()) && !loopback(r.Host)
}

func loopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// toolNamed is the table's tool of that name.
func toolNamed(name string) (toolDef, bool) {
	for _, t := range tools {
		if t.Name == name {
			return t, true
		}
	}
	return toolDef{}, false
}
