package pvesim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func (e *env) control(t *testing.T, secret, action string, body any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", e.base+controlPrefix+action, bytes.NewReader(b))
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	resp, err := e.hc.Do(req)
	must(t, err)
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// TestControlAPI: the control API needs its secret, and drives the same
// faults as the Go methods.
func TestControlAPI(t *testing.T) {
	t.Parallel()
	e := setup(t, Config{StartTime: testStart(), Control: true})
	secret := e.sim.ControlSecret()
	if len(secret) < 32 {
		t.Fatalf("control secret too short: %d", len(secret))
	}
	code, _ := e.control(t, "wrong", "die-next", map[string]any{"type": "vzsnapshot"})
	equal(t, "bad secret", code, http.StatusUnauthorized)
	code, out := e.control(t, secret, "die-next", map[string]any{"type": "vzsnapshot", "vmid": 101})
	equal(t, "die-next", code, http.StatusOK)
	equal(t, "labelled", out["simulator"], any("pvesim"))
	upid := e.upid(t, "POST", "/nodes/pve-1/lxc/101/snapshot", form("snapname", "s1"))
	code, out = e.control(t, secret, "clock", map[string]any{"advance": "10m"})
	equal(t, "clock", code, http.StatusOK)
	equal(t, "clock now", out["data"], any(testStart().Add(10*time.Minute).Format(time.RFC3339Nano)))
	equal(t, "died", e.taskStatus(t, upid)["exitstatus"], any("unexpected status"))
	code, out = e.control(t, secret, "outside-delete", map[string]any{"vmid": 101, "name": "s1"})
	equal(t, "outside delete answers", code, http.StatusOK)
	if u, _ := out["data"].(string); !strings.HasSuffix(u, ":vzdelsnapshot:101:root@pam:") {
		t.Fatalf("outside delete UPID %v", out["data"])
	}
	e.control(t, secret, "unlock", map[string]any{"vmid": 101})
	e.control(t, secret, "lock", map[string]any{"vmid": 102, "lock": "rollback"})
	equal(t, "locked by control", e.guest(t, 102).Lock, LockRollback)
	e.control(t, secret, "cut-node", map[string]any{"node": "pve-2"})
	equal(t, "cut", e.call(t, adminToken, "GET", "/nodes/pve-2/lxc", nil).status, statusUnreachable)
	e.control(t, secret, "reconnect-node", map[string]any{"node": "pve-2"})
	code, _ = e.control(t, secret, "fill-storage", map[string]any{"node": "pve-1", "storage": "local-lvm", "percent": 50})
	equal(t, "fill", code, http.StatusOK)
	code, _ = e.control(t, secret, "write", map[string]any{"vmid": 101, "bytes": 1024})
	equal(t, "write", code, http.StatusOK)
	code, _ = e.control(t, secret, "reboot-node", map[string]any{"node": "pve-1"})
	equal(t, "reboot", code, http.StatusOK)
	code, out = e.control(t, secret, "state", nil)
	equal(t, "state", code, http.StatusOK)
	if l, _ := out["data"].([]any); len(l) != 5 {
		t.Fatalf("state lists %d guests, want 5", len(l))
	}
	code, _ = e.control(t, secret, "nope", nil)
	equal(t, "unknown action", code, http.StatusBadRequest)
}

// TestControlOffByDefault: without Config.Control its paths are unknown.
func TestControlOffByDefault(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	code, _ := e.control(t, "", "die-next", map[string]any{"type": "vzsnapshot"})
	equal(t, "control off", code, http.StatusNotImplemented)
}

// TestCallsAndLogs: calls are counted per route pattern; logs say
// simulator and never hold a secret.
func TestCallsAndLogs(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	e := setup(t, Config{StartTime: testStart(), Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	e.call(t, adminToken, "GET", "/nodes/pve-1/lxc/101/snapshot", nil)
	e.call(t, adminToken, "GET", "/nodes/pve-2/lxc/201/snapshot/", nil)
	e.call(t, auditToken, "POST", "/nodes/pve-1/lxc/101/snapshot", form("snapname", "x1"))
	req, _ := http.NewRequest("GET", e.base+apiPrefix+"/nodes", nil)
	req.Header.Set("Authorization", "PVEAPIToken="+adminToken+"=not-the-secret-1234")
	resp, err := e.hc.Do(req)
	must(t, err)
	resp.Body.Close()
	calls := e.sim.Calls()
	equal(t, "snapshot lists", calls["GET /nodes/{node}/{type}/{vmid}/snapshot"], 2)
	equal(t, "snapshot posts", calls["POST /nodes/{node}/{type}/{vmid}/snapshot"], 1)
	logs := buf.String()
	for _, secret := range []string{testSecret, auditSecret, "not-the-secret-1234"} {
		if strings.Contains(logs, secret) {
			t.Fatalf("a secret is in the logs")
		}
	}
	if !strings.Contains(logs, "simulator") {
		t.Fatalf("logs do not say simulator: %q", logs)
	}
	e.sim.ResetCalls()
	equal(t, "reset", len(e.sim.Calls()), 0)
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRun: `boxsnap pvesim` serves the demo, writes the token (0600) and
// prints its path but never the secret.
func TestRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token.env")
	caFile := filepath.Join(dir, "ca.pem")
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, []string{"-listen", "127.0.0.1:0", "-token-file", tokenFile, "-ca-file", caFile, "-task-duration", "1ms", "-auth-fail-delay", "0"}, &out)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "serving") {
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("Run did not start: %s", out.String())
		}
		select {
		case err := <-done:
			t.Fatalf("Run ended: %v: %s", err, out.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	info, err := os.Stat(tokenFile)
	must(t, err)
	equal(t, "token file mode", info.Mode().Perm(), os.FileMode(0o600))
	secret := ""
	f, err := os.Open(tokenFile)
	must(t, err)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "PVE_TOKEN_SECRET="); ok {
			secret = v
		}
	}
	f.Close()
	if len(secret) != 36 {
		t.Fatalf("token secret %d characters, want a UUID", len(secret))
	}
	if strings.Contains(out.String(), secret) {
		t.Fatal("Run printed the secret")
	}
	if !strings.Contains(out.String(), tokenFile) || !strings.Contains(out.String(), "simulator") {
		t.Fatalf("Run's output: %s", out.String())
	}
	cancel()
	must(t, <-done)
}

// TestSeedDemo: the demo cluster's token can list, snapshot and read others'
// tasks.
func TestSeedDemo(t *testing.T) {
	t.Parallel()
	sim, err := New(Config{StartTime: testStart()})
	must(t, err)
	must(t, sim.SeedDemo("demo-secret"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, err := sim.Start(ctx)
	must(t, err)
	e := &env{sim: sim, base: base, hc: &http.Client{Transport: &http.Transport{TLSClientConfig: sim.TLSConfig()}}}
	get := func(path string) int {
		req, _ := http.NewRequest("GET", base+apiPrefix+path, nil)
		req.Header.Set("Authorization", "PVEAPIToken="+DemoTokenID+"=demo-secret")
		resp, err := e.hc.Do(req)
		must(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, p := range []string{"/cluster/resources?type=vm", "/nodes/pve-1/lxc/214/snapshot", "/nodes/pve-2/tasks", "/nodes/pve-2/storage/local-zfs/status"} {
		equal(t, p, get(p), http.StatusOK)
	}
	g, err := sim.Guest(216)
	must(t, err)
	equal(t, "the Windows guest", g.Config["ostype"], "win11")
}
