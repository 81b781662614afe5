package pvesim

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// Tokens every test cluster has.
const (
	adminToken  = "boxsnap@pve!admin"
	auditToken  = "boxsnap@pve!audit"
	testSecret  = "5f0c2b1e-0000-4000-8000-00000000beef"
	auditSecret = "5f0c2b1e-0000-4000-8000-00000000a0d1"
)

// testStart is the frozen clock's start in tests that drive the clock.
func testStart() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }

type env struct {
	sim  *Sim
	base string // https://127.0.0.1:port
	hc   *http.Client
}

// setup starts a simulator with two nodes: pve-1 (LVM-thin local-lvm, and
// a directory store "local") and pve-2 (ZFS local-zfs), guests 101 (LXC,
// running, onboot), 102 (QEMU, stopped), 103 (LXC on a directory: raw, no
// snapshots), 201 (LXC on ZFS, running), 202 (QEMU on ZFS), and two tokens:
// admin (PVEVMAdmin and Sys.Audit everywhere) and audit (VM.Audit on /vms).
func setup(t testing.TB, cfg Config) *env {
	t.Helper()
	sim, err := New(cfg)
	must(t, err)
	must(t, sim.AddNode("pve-1"))
	must(t, sim.AddNode("pve-2"))
	must(t, sim.AddStorage("pve-1", StorageSpec{ID: "local-lvm", Type: StorageLVMThin, Total: 100 * gib}))
	must(t, sim.AddStorage("pve-1", StorageSpec{ID: "local", Type: StorageDir, Total: 100 * gib}))
	must(t, sim.AddStorage("pve-2", StorageSpec{ID: "local-zfs", Type: StorageZFSPool, Total: 100 * gib}))
	for _, g := range []GuestSpec{
		{VMID: 101, Type: LXC, Node: "pve-1", Name: "amber-fox", Storage: "local-lvm", OnBoot: true, Running: true, Written: gib},
		{VMID: 102, Type: QEMU, Node: "pve-1", Name: "quiet-owl", Storage: "local-lvm", DiskSize: 32 * gib, Memory: 4096},
		{VMID: 103, Type: LXC, Node: "pve-1", Name: "dir-box", Storage: "local"},
		{VMID: 201, Type: LXC, Node: "pve-2", Name: "river-elk", Storage: "local-zfs", Running: true},
		{VMID: 202, Type: QEMU, Node: "pve-2", Name: "stone-bay", Storage: "local-zfs"},
	} {
		must(t, sim.AddGuest(g))
	}
	must(t, sim.AddToken(adminToken, testSecret,
		Grant{Path: "/", Privs: []string{"PVEVMAdmin", "PVEDatastoreUser", "Sys.Audit"}, Propagate: true}))
	must(t, sim.AddToken(auditToken, auditSecret, Grant{Path: "/vms", Privs: []string{"VM.Audit"}, Propagate: true}))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	base, err := sim.Start(ctx)
	must(t, err)
	t.Cleanup(func() { _ = sim.Close() })
	return &env{sim: sim, base: base, hc: &http.Client{Transport: &http.Transport{TLSClientConfig: sim.TLSConfig()}, Timeout: 10 * time.Second}}
}

// frozen is a Config with the clock frozen at testStart() and default tasks.
func frozen() Config { return Config{StartTime: testStart()} }

// instant is a Config whose tasks end at the next call (for clients that
// poll every 2 s).
func instant() Config { return Config{TaskDuration: -1} }

type answer struct {
	status int
	reason string
	body   map[string]any
	raw    string
}

func (a answer) data() any { return a.body["data"] }

func (a answer) dataMap(t testing.TB) map[string]any {
	t.Helper()
	m, ok := a.body["data"].(map[string]any)
	if !ok {
		t.Fatalf("data is %T, want an object: %s", a.body["data"], a.raw)
	}
	return m
}

func (a answer) dataList(t testing.TB) []map[string]any {
	t.Helper()
	l, ok := a.body["data"].([]any)
	if !ok {
		t.Fatalf("data is %T, want a list: %s", a.body["data"], a.raw)
	}
	out := make([]map[string]any, len(l))
	for i, x := range l {
		out[i], _ = x.(map[string]any)
	}
	return out
}

// call makes one API request with a token (tokenID "" sends none).
func (e *env) call(t testing.TB, tokenID, method, path string, params url.Values) answer {
	t.Helper()
	var body io.Reader
	u := e.base + apiPrefix + path
	if method == http.MethodGet || method == http.MethodDelete {
		if len(params) > 0 {
			u += "?" + params.Encode()
		}
	} else if params != nil {
		body = strings.NewReader(params.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	must(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	switch tokenID {
	case adminToken:
		req.Header.Set("Authorization", "PVEAPIToken="+adminToken+"="+testSecret)
	case auditToken:
		req.Header.Set("Authorization", "PVEAPIToken="+auditToken+"="+auditSecret)
	}
	resp, err := e.hc.Do(req)
	must(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	must(t, err)
	a := answer{status: resp.StatusCode, reason: strings.TrimSpace(strings.TrimPrefix(resp.Status, itoa(resp.StatusCode))), raw: string(raw)}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &a.body); err != nil {
			t.Fatalf("%s %s: body is not JSON: %q", method, path, raw)
		}
	}
	return a
}

// upid makes a request that must answer a UPID, and returns it.
func (e *env) upid(t testing.TB, method, path string, params url.Values) string {
	t.Helper()
	a := e.call(t, adminToken, method, path, params)
	if a.status != http.StatusOK {
		t.Fatalf("%s %s: %d %s: %s", method, path, a.status, a.reason, a.raw)
	}
	u, _ := a.data().(string)
	if !strings.HasPrefix(u, "UPID:") {
		t.Fatalf("%s %s: data %v is not a UPID", method, path, a.data())
	}
	return u
}

// taskStatus reads a task's status through the API.
func (e *env) taskStatus(t testing.TB, upid string) map[string]any {
	t.Helper()
	node, _ := parseUPID(upid)
	a := e.call(t, adminToken, "GET", "/nodes/"+node+"/tasks/"+url.PathEscape(upid)+"/status", nil)
	if a.status != http.StatusOK {
		t.Fatalf("task status: %d %s", a.status, a.raw)
	}
	return a.dataMap(t)
}

// exitStatus advances the frozen clock past every task and returns the
// task's exit status.
func (e *env) finish(t testing.TB, upid string) string {
	t.Helper()
	e.sim.Advance(time.Minute)
	st := e.taskStatus(t, upid)
	if st["status"] != "stopped" {
		t.Fatalf("task %s still %v after a minute", upid, st["status"])
	}
	s, _ := st["exitstatus"].(string)
	return s
}

func (e *env) guest(t testing.TB, vmid int) GuestInfo {
	t.Helper()
	g, err := e.sim.Guest(vmid)
	must(t, err)
	return g
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func equal[T comparable](t testing.TB, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

func form(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}
