package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/api"
	"github.com/boxsnap/boxsnap/app/api/mcptools"
	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// env is a running core behind the API on a real HTTP server.
type env struct {
	*coretest.Env
	srv   *httptest.Server
	owner string // the owner's personal API token
}

func setup(t testing.TB) *env {
	t.Helper()
	return setupWith(t, coretest.Options{})
}

// setupWith is setup with the core's options (a wrapped local backend).
func setupWith(t testing.TB, opts coretest.Options) *env {
	t.Helper()
	e := coretest.New(t, opts)
	r := chi.NewRouter()
	aopts := e.APIOptions()
	r.Mount("/api/v1", api.New(aopts))
	// The same tools over MCP, on the same server.
	r.Handle(mcptools.MCPPath, mcptools.MCP(aopts))
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	_, token, err := e.Auth.CreateAPIToken(context.Background(), "cli")
	if err != nil {
		t.Fatal(err)
	}
	// The box templates an agent makes its boxes from.
	be := e.Core.Backends()[0].ID
	for _, tm := range []snapshots.BoxTemplate{
		{Name: "blank", Backend: be, Kind: "linux"},
		{Name: "with-screen", Backend: be, Kind: "linux", HasScreen: true},
	} {
		if err := e.Boxes.SaveTemplate(context.Background(), snapshots.Owner(), tm); err != nil {
			t.Fatal(err)
		}
	}
	return &env{Env: e, srv: srv, owner: token}
}

// answer is one HTTP answer: its status and its body, raw and decoded.
type answer struct {
	Status int
	Raw    []byte
	JSON   map[string]any
}

// errorWords is the error's message, or "".
func (a answer) errorWords() string {
	if e, ok := a.JSON["error"].(map[string]any); ok {
		s, _ := e["message"].(string)
		return s
	}
	return ""
}

func (a answer) errorCode() string {
	if e, ok := a.JSON["error"].(map[string]any); ok {
		s, _ := e["code"].(string)
		return s
	}
	return ""
}

func (a answer) tryAgain() bool {
	if e, ok := a.JSON["error"].(map[string]any); ok {
		b, _ := e["try_again"].(bool)
		return b
	}
	return false
}

func (a answer) str(key string) string {
	s, _ := a.JSON[key].(string)
	return s
}

// call sends one request; body is marshalled unless it is a string or nil.
func (e *env) call(t testing.TB, method, path, token string, body any) answer {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.srv.URL+"/api/v1"+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{Status: resp.StatusCode, Raw: raw}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &a.JSON); err != nil {
			t.Fatalf("%s %s: the answer is not JSON: %v\n%s", method, path, err, raw)
		}
	}
	return a
}

// must checks the status, and shows the answer when it differs.
func (a answer) must(t testing.TB, status int) answer {
	t.Helper()
	if a.Status != status {
		t.Fatalf("status %d, want %d: %s", a.Status, status, a.Raw)
	}
	return a
}

// agent makes a thread and returns its token and caller.
func (e *env) agent(t testing.TB, title string) (string, snapshots.Caller) {
	t.Helper()
	_, c, token := e.Thread(t, title)
	return token, c
}

func ownerCaller() snapshots.Caller { return snapshots.Owner() }

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// twoThreads makes two agents' threads, A with a box a-box and B with a
// box b-box and a snapshot of it, "b's own": the set-up of the tests that
// try one thread's token against another's box.
func (e *env) twoThreads(t testing.TB) (tokA, tokB, snB string) {
	t.Helper()
	tokA, _ = e.agent(t, "Thread A")
	tokB, _ = e.agent(t, "Thread B")
	e.call(t, "POST", "/boxes", tokA, map[string]any{"name": "a-box", "template": "blank"}).must(t, 201)
	e.call(t, "POST", "/boxes", tokB, map[string]any{"name": "b-box", "template": "blank"}).must(t, 201)
	snB = e.call(t, "POST", "/tools/box_snapshot", tokB, map[string]any{"box": "b-box", "name": "b's own"}).must(t, 200).str("snapshot")
	return tokA, tokB, snB
}
