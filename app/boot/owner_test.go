package boot_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/auth"
	"github.com/boxsnap/boxsnap/app/boot"
	"github.com/boxsnap/boxsnap/app/config"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/logging"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/providers/local"
)

// productProcess makes the test binary run boxsnap's serve or work as main
// does, with the rest of the value as its flags ("serve --workers=false").
const productProcess = "BOXSNAP_TEST_PRODUCT"

// runProduct is main's serve and work: the same config, logger and boot.
func runProduct(line string) int {
	f := strings.Fields(line)
	cmd, rest := f[0], f[1:]
	cfg, _, err := config.Load("boxsnap "+cmd, rest, os.Getenv, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "boxsnap %s: %v\n", cmd, err)
		return 2
	}
	logger := logging.New(os.Stderr, cfg.LogFormat, cfg.LogLevel)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	switch cmd {
	case "serve":
		err = boot.Serve(ctx, cfg, logger, os.Stdout, boot.Options{})
	case "work":
		err = boot.Work(ctx, cfg, logger, boot.Options{})
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "boxsnap %s: %v\n", cmd, err)
		return 1
	}
	return 0
}

// product is one running boxsnap process of the Procfile.
type product struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
}

func (p *product) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// startProduct starts one Procfile line ("serve --workers=false", "work")
// as its own process, on env.
func startProduct(t *testing.T, name, line string, env []string) *product {
	t.Helper()
	logFile := filepath.Join(t.TempDir(), name+".log")
	out, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), env...), productProcess+"="+line)
	cmd.Dir = t.TempDir()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &product{name: name, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); out.Close(); close(p.done) }()
	t.Cleanup(func() {
		if p.alive() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				<-p.done
			}
		}
		if t.Failed() {
			data, _ := os.ReadFile(logFile)
			t.Logf("%s's log:\n%s", name, data)
		}
	})
	return p
}

// boxCopies finds every process on this host running the box's command
// (its argv exactly), and the boxsnap process each descends from.
func boxCopies(t *testing.T, argv []string, procs []*product) map[int]string {
	t.Helper()
	out := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !slices.Equal(strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00"), argv) {
			continue
		}
		if state, _ := procField(pid, 0); state == "Z" {
			continue
		}
		out[pid] = "no boxsnap process"
		for a := pid; a > 1; {
			ppid, err := procField(a, 1)
			if err != nil {
				break
			}
			a, _ = strconv.Atoi(ppid)
			for _, p := range procs {
				if p.cmd.Process.Pid == a {
					out[pid] = p.name
				}
			}
		}
	}
	return out
}

// procField is field i after the command's name in /proc/<pid>/stat (0:
// state, 1: ppid).
func procField(pid, i int) (string, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", err
	}
	s := string(data)
	j := strings.LastIndexByte(s, ')')
	if j < 0 {
		return "", errors.New("no )")
	}
	f := strings.Fields(s[j+1:])
	if i >= len(f) {
		return "", errors.New("short stat")
	}
	return f[i], nil
}

// TestOneProcessPerBox runs the README's Procfile (a web process with
// --workers=false and workers) on one DATABASE_URL and one data folder: a
// box's process runs in exactly one place, under a live worker, never under
// the web process; a worker killed with SIGKILL has its box's process run
// again, once, under a live worker within the recover interval; a worker
// started later starts no second copy; and a restore through the API that
// says every process ended is true.
func TestOneProcessPerBox(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("box processes run as the box user: needs root")
	}
	ctx := context.Background()
	dsn := dbtest.NewDSN(t)
	top := t.TempDir()
	// Each local box is a file system of its own (a loop mount, as root):
	// unmounted once the processes are ended, before the folder is removed.
	t.Cleanup(func() { _ = local.UnmountAll(top) })
	if err := local.Passable(top, os.TempDir()); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(top, "data")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	const recoverEvery = time.Second
	env := []string{"DATABASE_URL=" + dsn, "BOXSNAP_DATA_DIR=" + data, "BOXSNAP_ADDR=" + addr,
		"BOXSNAP_RECOVER_INTERVAL=" + recoverEvery.String(), "BOXSNAP_LOG_LEVEL=debug", "PLAYWRIGHT_DRIVER_DIR=" + filepath.Join(top, "none")}

	web := startProduct(t, "web", "serve --workers=false", env)
	base := "http://" + addr
	waitFor(t, 60*time.Second, "the web process serves", func() bool {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == http.StatusOK
	})
	w1 := startProduct(t, "worker-1", "work", env)
	w2 := startProduct(t, "worker-2", "work", env)
	procs := []*product{web, w1, w2}

	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	workersAlive := func(n int) bool {
		var got int
		err := pool.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())").Scan(&got)
		return err == nil && got >= n
	}
	waitFor(t, 60*time.Second, "two workers hold their presence", func() bool { return workersAlive(2) })
	_, token, err := auth.New(store.New(pool), slog.New(slog.NewTextHandler(io.Discard, nil))).CreateAPIToken(ctx, "one process per box")
	if err != nil {
		t.Fatal(err)
	}
	api := func(method, path string, body any) (int, map[string]any) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, base+"/api/v1"+path, rd)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		raw, _ := io.ReadAll(resp.Body)
		_ = json.Unmarshal(raw, &out)
		if resp.StatusCode >= 300 {
			t.Fatalf("%s %s: %s: %s", method, path, resp.Status, raw)
		}
		return resp.StatusCode, out
	}
	// done waits for the answer's operation to end, and answers it.
	done := func(answer map[string]any) map[string]any {
		t.Helper()
		op, _ := answer["operation"].(map[string]any)
		if op == nil {
			return answer
		}
		id := op["id"].(string)
		var got map[string]any
		waitFor(t, 60*time.Second, "operation "+id+" ends", func() bool {
			_, a := api("GET", "/operations/"+id, nil)
			got, _ = a["operation"].(map[string]any)
			return got != nil && got["state"] != "running"
		})
		if got["state"] != "done" {
			t.Fatalf("operation %s ended %v: %v", id, got["state"], got)
		}
		return got
	}

	secs := fmt.Sprintf("%d.%03d", 4000+rand.IntN(1000), rand.IntN(1000))
	argv := []string{"sleep", secs}
	_, box := api("POST", "/boxes", map[string]any{"name": "owned-box", "backend": "local", "command": "sleep " + secs})
	boxID, _ := box["id"].(string)
	if boxID == "" {
		done(box)
		t.Fatalf("no box in %v", box)
	}
	one := func(why string, live []*product) (int, string) {
		t.Helper()
		var copies map[int]string
		waitFor(t, 30*time.Second, why, func() bool {
			copies = boxCopies(t, argv, procs)
			return len(copies) == 1
		})
		// Several recover intervals on, it is still once.
		time.Sleep(3 * recoverEvery)
		copies = boxCopies(t, argv, procs)
		if len(copies) != 1 {
			t.Fatalf("%s: the box's process runs %d times on this host, want once: %v", why, len(copies), copies)
		}
		for pid, under := range copies {
			for _, p := range live {
				if p.name == under && p.alive() {
					return pid, under
				}
			}
			t.Fatalf("%s: the box's process %d runs under %s, not a live worker", why, pid, under)
		}
		return 0, ""
	}
	pid, owner := one("the box's process runs once", []*product{w1, w2})
	t.Logf("the box's process %d runs under %s", pid, owner)

	// The owner dies: a live worker starts it again, once.
	dead, other := w1, w2
	if owner == w2.name {
		dead, other = w2, w1
	}
	_ = dead.cmd.Process.Signal(syscall.SIGKILL)
	<-dead.done
	killed := time.Now()
	waitFor(t, 3*recoverEvery+10*time.Second, "the box's process runs again after its owner died", func() bool {
		c := boxCopies(t, argv, procs)
		_, gone := c[pid]
		return len(c) >= 1 && !gone
	})
	t.Logf("the box's process ran again %s after its owner was killed (recover interval %s)", time.Since(killed).Round(time.Millisecond), recoverEvery)
	pid, owner = one("after its owner died", []*product{other})

	// A worker that starts now (the Procfile runner's restart) starts no
	// second copy.
	w3 := startProduct(t, "worker-3", "work", env)
	procs = append(procs, w3)
	waitFor(t, 60*time.Second, "the new worker holds its presence", func() bool { return workersAlive(2) })
	pid, owner = one("after another worker started", []*product{other, w3})

	// A restore that says every process ended: it is true, whichever worker
	// runs it, and the box's process runs once after.
	_, snap := api("POST", "/boxes/"+boxID+"/snapshots", map[string]any{"name": "first"})
	done(snap)
	for i := range 3 {
		before := boxCopies(t, argv, procs)
		_, ans := api("POST", "/boxes/"+boxID+"/snapshots/first/restore", map[string]any{"replace": true, "noUndo": true})
		op := done(ans)
		var res struct {
			Processes bool `json:"processesEnded"`
		}
		raw, _ := json.Marshal(op["result"])
		_ = json.Unmarshal(raw, &res)
		if !res.Processes {
			t.Fatalf("restore %d: processesEnded is false: %s", i+1, raw)
		}
		after := boxCopies(t, argv, procs)
		for p := range before {
			if _, ok := after[p]; ok {
				t.Fatalf("restore %d said every process ended, but the box's process %d (under %s) still runs: before %v, after %v", i+1, p, before[p], before, after)
			}
		}
		pid, owner = one(fmt.Sprintf("after restore %d", i+1), []*product{other, w3})
		t.Logf("restore %d: the box's process %d runs under %s", i+1, pid, owner)
	}
}

// waitFor polls ok until it holds, failing the test after d.
func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
