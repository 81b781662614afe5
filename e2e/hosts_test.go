package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestTwoHostsOneDatabase runs the built binary as two hosts, each with
// its own data folder, on one database: host-a's web process (no workers)
// and host-b's serve (with workers). A box made on host-a is owned by it;
// its take, asked on host-a, waits in host-a's queue while host-b, working
// all along, runs a take of its own box asked later, and the hosts, asked
// on host-b and by boxsnap doctor there, say the take waits for host-a
// with no live worker to run it.
// A worker of host-a's (boxsnap work, on host-a's data folder) then runs
// it.
func TestTwoHostsOneDatabase(t *testing.T) {
	h := newBinHosts(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	_, baseA := h.start("host-a", nil, "serve", "--workers=false")
	_, baseB := h.start("host-b", nil, "serve")
	tok, err := personToken(ctx, baseA, Password)
	if err != nil {
		t.Fatal(err)
	}
	onA, onB := newSoakHTTP(baseA, tok), newSoakHTTP(baseB, tok)

	var hosts struct {
		Hosts []struct {
			Name  string `json:"name"`
			Alive bool   `json:"alive"`
		} `json:"hosts"`
		This string `json:"this"`
	}
	if err := onB.do(ctx, "GET", "/api/v1/hosts", nil, &hosts); err != nil {
		t.Fatal(err)
	}
	if hosts.This != "host-b" || len(hosts.Hosts) != 2 || hosts.Hosts[0].Name != "host-a" || !hosts.Hosts[0].Alive || !hosts.Hosts[1].Alive {
		t.Fatalf("GET /api/v1/hosts on host-b: %+v", hosts)
	}

	var op struct {
		Operation struct {
			ID    string `json:"id"`
			State string `json:"state"`
			Step  string `json:"step"`
		} `json:"operation"`
	}
	if err := onA.do(ctx, "POST", "/api/v1/boxes", map[string]string{"name": "amber-fox", "backend": "local"}, nil); err != nil {
		t.Fatalf("make a box on host-a: %v", err)
	}
	if err := onA.do(ctx, "POST", "/api/v1/boxes/amber-fox/snapshots", map[string]string{"name": "on host-a"}, &op); err != nil {
		t.Fatalf("take on host-a: %v", err)
	}
	takeA := op.Operation.ID
	if err := onB.do(ctx, "POST", "/api/v1/boxes", map[string]string{"name": "brisk-lake", "backend": "local"}, nil); err != nil {
		t.Fatalf("make a box on host-b: %v", err)
	}
	if err := onB.do(ctx, "POST", "/api/v1/boxes/brisk-lake/snapshots?wait=true", map[string]string{"name": "on host-b"}, &op); err != nil {
		t.Fatalf("take on host-b: %v", err)
	}
	if op.Operation.State != "done" {
		t.Fatalf("host-b's take of its own box: %+v", op.Operation)
	}
	if err := onA.do(ctx, "GET", "/api/v1/operations/"+takeA, nil, &op); err != nil {
		t.Fatal(err)
	}
	if op.Operation.State != "running" || op.Operation.Step != "queued" {
		t.Fatalf("host-a's box's take, after host-b ran a later take: %+v; host-b must not run it", op.Operation)
	}
	stranded := strandedOnA(ctx, t, onB)
	doctor := exec.CommandContext(ctx, h.bin, "doctor")
	doctor.Env = append(os.Environ(), "DATABASE_URL="+h.dsn, "BOXSNAP_HOST=host-b", "BOXSNAP_DATA_DIR="+h.dataDir("host-b"), "BOXSNAP_LOCAL_DISK_IMAGES=false")
	if out, _ := doctor.CombinedOutput(); !strings.Contains(string(out), "hosts' workers") || !strings.Contains(string(out), stranded) {
		t.Fatalf("boxsnap doctor on host-b does not say host-a's take waits with no worker (%q):\n%s", stranded, out)
	}

	h.start("host-a", nil, "work")
	deadline := time.Now().Add(2 * time.Minute)
	for op.Operation.State == "running" && time.Now().Before(deadline) {
		if err := onA.do(ctx, "GET", "/api/v1/operations/"+takeA+"?wait=true", nil, &op); err != nil {
			t.Fatal(err)
		}
	}
	if op.Operation.State != "done" {
		t.Fatalf("host-a's take, with a worker on host-a: %+v", op.Operation)
	}
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("…%s", s[len(s)-n:])
}

// strandedOnA checks, through api, that host-a's queue holds one job and
// no worker of host-a's is alive to run it, in words, and that host-b's
// workers are alive; it answers those words.
func strandedOnA(ctx context.Context, t *testing.T, api *soakHTTP) string {
	t.Helper()
	var ans struct {
		Hosts []struct {
			Name     string `json:"name"`
			Working  bool   `json:"working"`
			Waiting  int64  `json:"waiting"`
			Stranded string `json:"stranded"`
		} `json:"hosts"`
	}
	if err := api.do(ctx, "GET", "/api/v1/hosts", nil, &ans); err != nil {
		t.Fatal(err)
	}
	want := "1 job waits for host host-a and no worker of it is alive to run it: start boxsnap work (or boxsnap serve with its workers) on host-a, or move its boxes to another host."
	if len(ans.Hosts) != 2 || ans.Hosts[0].Working || ans.Hosts[0].Waiting != 1 || ans.Hosts[0].Stranded != want ||
		!ans.Hosts[1].Working || ans.Hosts[1].Stranded != "" {
		t.Fatalf("GET /api/v1/hosts with host-a's take waiting and no worker on host-a: %+v; want host-a to say %q", ans.Hosts, want)
	}
	return want
}
