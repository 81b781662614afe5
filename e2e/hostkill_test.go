package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/snapshots/hosts"
	"github.com/boxsnap/boxsnap/providers/local"
	"github.com/boxsnap/boxsnap/providers/local/objstore/s3test"
)

// TestAMoveAndATakeoverKilledPartWay runs the built binary as two hosts on
// one database and bucket (binHosts): host-a a serve with its workers,
// host-b a web process and a worker. A box of host-a's, of a few thousand
// files, is moved to host-b, and host-b's worker is killed (SIGKILL)
// while the move's restore writes there; another worker of host-b's is
// started. Then host-a is stopped for good and marked gone, and host-b
// takes its boxes over, its worker killed the same way part-way. Each
// time: the operation ends (done or failed, never left running), the box
// belongs to host-b alone and holds its snapshot's files there, a take of
// it there works, after the local sweep nothing is left on either host's
// folder under a temporary name, the bucket holds what it held before
// (a move and a takeover only read it), and a second try succeeds: the box
// moved back to host-a, a second takeover with nothing left to take.
func TestAMoveAndATakeoverKilledPartWay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	srv := s3test.Start(t)
	bucket := srv.Bucket(t)
	h := newBinHosts(t)
	store := bucketEnv(bucket)
	hostA, baseA := h.start("host-a", store, "serve")
	_, baseB := h.start("host-b", store, "serve", "--workers=false")
	workB, _ := h.start("host-b", store, "work")
	tok, err := personToken(ctx, baseA, Password)
	if err != nil {
		t.Fatal(err)
	}
	onA, onB := newSoakHTTP(baseA, tok), newSoakHTTP(baseB, tok)
	amber := makeBox(ctx, t, onA, "amber-fox")
	dirA, dirB := h.boxDir("host-a", amber), h.boxDir("host-b", amber)
	writeMany(t, dirA, "first")
	takeSnapshots(ctx, t, onA, "amber-fox", dirA, 1)

	// The move, killed part-way on host-b.
	shipped := bucketKeys(ctx, t, srv, bucket.Bucket)
	var op struct {
		Operation struct {
			ID string `json:"id"`
		} `json:"operation"`
	}
	if err := onB.do(ctx, "POST", "/api/v1/boxes/amber-fox/move", map[string]string{"host": "host-b"}, &op); err != nil {
		t.Fatalf("move amber-fox to host-b: %v", err)
	}
	workB = h.killMidRestore(ctx, t, workB, "host-b", dirB, op.Operation.ID, store)
	state := waitEnded(ctx, t, onB, op.Operation.ID)
	h.carriedWhole(ctx, t, onB, amber, "host-b", state, dirA, dirB)
	h.sweptClean(ctx, t, srv, bucket.Bucket, shipped)
	if state != "done" {
		t.Fatalf("the move killed part-way ended %s", state)
	}
	takeSnapshots(ctx, t, onB, "amber-fox", dirB, 1)
	// A second move: back to host-a, whole.
	if err := onA.do(ctx, "POST", "/api/v1/boxes/amber-fox/move", map[string]string{"host": "host-a"}, &op); err != nil {
		t.Fatalf("move amber-fox back to host-a: %v", err)
	}
	h.carriedWhole(ctx, t, onA, amber, "host-a", waitEnded(ctx, t, onA, op.Operation.ID), dirB, dirA)

	// The takeover, killed part-way on host-b: what host-b must fetch is
	// new to it.
	writeMany(t, dirA, "second")
	takeSnapshots(ctx, t, onA, "amber-fox", dirA, 1)
	hostA.stop()
	h.longGone(ctx, t, "host-a")
	if err := onB.do(ctx, "POST", "/api/v1/hosts/host-a/gone", nil, nil); err != nil {
		t.Fatalf("mark host-a gone: %v", err)
	}
	shipped = bucketKeys(ctx, t, srv, bucket.Bucket)
	var taken hosts.TakeOverResult
	if err := onB.do(ctx, "POST", "/api/v1/hosts/host-a/takeover", map[string]string{}, &taken); err != nil || len(taken.Taken) != 1 {
		t.Fatalf("take host-a's boxes over on host-b: %+v %v", taken, err)
	}
	h.killMidRestore(ctx, t, workB, "host-b", dirB, taken.Taken[0].Operation, store)
	state = waitEnded(ctx, t, onB, taken.Taken[0].Operation)
	h.carriedWhole(ctx, t, onB, amber, "host-b", state, dirA, dirB)
	h.sweptClean(ctx, t, srv, bucket.Bucket, shipped)
	if state != "done" {
		t.Fatalf("the takeover killed part-way ended %s", state)
	}
	takeSnapshots(ctx, t, onB, "amber-fox", dirB, 1)
	// A second takeover: nothing of host-a's is left to take.
	taken = hosts.TakeOverResult{}
	if err := onB.do(ctx, "POST", "/api/v1/hosts/host-a/takeover", map[string]string{}, &taken); err != nil || len(taken.Taken)+len(taken.Left) != 0 {
		t.Fatalf("a second takeover of host-a: %+v %v", taken, err)
	}
}

// writeMany writes 4,000 files of about 2 KiB into dir, each saying
// round: enough that a restore of them on another host takes a while.
func writeMany(t *testing.T, dir, round string) {
	t.Helper()
	for i := range 4000 {
		p := filepath.Join(dir, "many", fmt.Sprintf("%02d", i%40), fmt.Sprintf("f%04d.txt", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Repeat(fmt.Sprintf("%s %d\n", round, i), 200)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// killMidRestore stops (SIGSTOP) the worker w of host once the restore
// op writes there (its fetched content in the host's cache, its staging,
// or the box's folder dir holding files), seen at the entry written, kills it (SIGKILL, as a
// crash), and starts another worker on that host with the settings env,
// which it answers. A restore that ended before the stop fails the test:
// the kill missed it.
func (h *binHosts) killMidRestore(ctx context.Context, t *testing.T, w *soakProc, host, dir, op string, env []string) *soakProc {
	t.Helper()
	root := filepath.Join(h.dataDir(host), "local")
	writing := func() string {
		for _, pat := range []string{filepath.Join(root, "content/*/*"), filepath.Join(root, "tmp/*"), filepath.Join(dir, "many")} {
			if m, _ := filepath.Glob(pat); len(m) > 0 {
				return m[0]
			}
		}
		return ""
	}
	// Asked again at each entry written in the host's folder, its
	// content's, its staging's or the box's (two levels down: a content
	// file's folder, the box's folder and its first).
	seen := ""
	if !watchDirs(t, 2, root).until(ctx, 2*time.Minute, func() bool { seen = writing(); return seen != "" }) {
		t.Fatalf("no restore wrote on %s within 2 minutes", host)
	}
	_ = syscall.Kill(w.pid(), syscall.SIGSTOP)
	conn, err := pgx.Connect(ctx, strings.TrimSuffix(h.dsn, " pool_max_conns=12"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var state, step string
	if err := conn.QueryRow(ctx, "SELECT state, step FROM operations WHERE id = $1", op).Scan(&state, &step); err != nil {
		t.Fatal(err)
	}
	if state != "running" {
		t.Fatalf("the restore on %s ended %s before its worker was stopped: the kill missed it", host, state)
	}
	t.Logf("%s's worker killed at the restore's step %s, once %s was there", host, step, seen)
	w.kill()
	next, _ := h.start(host, env, "work")
	return next
}

// waitEnded waits up to 4 minutes for the operation id to end, and
// answers its state; one still running then, or unknown, fails the test.
func waitEnded(ctx context.Context, t *testing.T, api *soakHTTP, id string) string {
	t.Helper()
	var op struct {
		Operation struct {
			State, Step string
			Error       *string
		} `json:"operation"`
	}
	// Each ask waits on the server for the operation's end, for a while.
	wctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	for {
		if err := api.do(wctx, "GET", "/api/v1/operations/"+id+"?wait=true", nil, &op); err != nil {
			if wctx.Err() != nil && ctx.Err() == nil {
				t.Fatalf("operation %s still runs 4 minutes on, at %s", id, op.Operation.Step)
			}
			t.Fatal(err)
		}
		if op.Operation.State != "running" {
			break
		}
	}
	if op.Operation.State != "done" && op.Operation.State != "failed" {
		t.Fatalf("operation %s ended %s at %s: %v", id, op.Operation.State, op.Operation.Step, op.Operation.Error)
	}
	return op.Operation.State
}

// carriedWhole checks a box carried from one host to another, through
// api on host to: it belongs to to alone, and, where its operation ended
// done, holds the files of the folder it came from (dirFrom) in its folder
// there (dirTo), byte for byte.
func (h *binHosts) carriedWhole(ctx context.Context, t *testing.T, api *soakHTTP, box, to, state, dirFrom, dirTo string) {
	t.Helper()
	conn, err := pgx.Connect(ctx, strings.TrimSuffix(h.dsn, " pool_max_conns=12"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var owner *string
	if err := conn.QueryRow(ctx, "SELECT owner_host FROM boxes WHERE id = $1", box).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	if owner == nil || *owner != to {
		t.Fatalf("box %s belongs to host %v, not %s", box, owner, to)
	}
	if state == "done" {
		sameFiles(t, dirFrom, dirTo)
	}
}

// longGone makes host seem unseen for longer than a host must be before
// it is marked gone (hosts.SeenAliveFor), which a test cannot wait for.
func (h *binHosts) longGone(ctx context.Context, t *testing.T, host string) {
	t.Helper()
	conn, err := pgx.Connect(ctx, strings.TrimSuffix(h.dsn, " pool_max_conns=12"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "UPDATE hosts SET last_seen_at = now() - $2::interval WHERE name = $1",
		host, fmt.Sprintf("%d seconds", int((hosts.SeenAliveFor+time.Minute).Seconds()))); err != nil {
		t.Fatal(err)
	}
}

// sweptClean runs the local backend's sweep on each host's folder, as a
// process's start does, then checks that nothing is left there under a
// temporary name (a fork's, a reset's, a take's, a staging folder) and
// that the bucket holds the keys it held before (shipped).
func (h *binHosts) sweptClean(ctx context.Context, t *testing.T, srv *s3test.Server, bucket string, shipped []string) {
	t.Helper()
	for _, host := range []string{"host-a", "host-b"} {
		root := filepath.Join(h.dataDir(host), "local")
		lb, err := local.New(local.Config{Root: root, Install: "e2e", Host: host})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := lb.Sweep(ctx); err != nil {
			t.Fatalf("the sweep on %s: %v", host, err)
		}
		var left []string
		for _, pat := range []string{"boxes/.fork-*", "boxes/.reset-*", "disks/.fork-*", "disks/.reset-*", "snapshots/.taking-*", "tmp/*"} {
			m, _ := filepath.Glob(filepath.Join(root, pat))
			left = append(left, m...)
		}
		if len(left) != 0 {
			t.Errorf("after the sweep, %s's folder holds %q", host, left)
		}
	}
	if got := bucketKeys(ctx, t, srv, bucket); !slices.Equal(got, shipped) {
		t.Errorf("the bucket held %d keys and holds %d: a move or a takeover only reads it", len(shipped), len(got))
	}
}

// bucketKeys lists the bucket's keys, sorted.
func bucketKeys(ctx context.Context, t *testing.T, srv *s3test.Server, bucket string) []string {
	t.Helper()
	keys, err := srv.List(ctx, bucket)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	return keys
}
