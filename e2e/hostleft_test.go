package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
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

// TestAMovedBoxLeavesItsOldHost runs the built binary as two hosts on one
// database and bucket (binHosts), each a serve with its workers and the
// hosts' interval shortened to 5 seconds. A box of host-a's running a
// process is moved to host-b: within host-a's interval (past
// hosts.LeftQuiet) its folder, state and process are gone from host-a,
// while it runs a process of its own on host-b and takes there, and its
// snapshots and the bucket are as they were. A box whose process the
// backend stopped at its disk bound on host-a, moved alike, stays
// stopped on host-b. Then host-a is killed (SIGKILL) while it takes
// another box, brisk-lake, of 4,000 files, marked gone, and host-b takes
// its boxes over: the take host-a left running ends failed, saying why on
// the operation and the box's log, its snapshot failed, and the box is
// restored on host-b from its last ready snapshot; cedar-elm, which ran a
// process on host-a, runs on host-b. Then cedar-elm is released on
// host-b, and host-a, started again, keeps its copy found: not deleted,
// its process stopped, the released box's log saying where it is.
func TestAMovedBoxLeavesItsOldHost(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	srv := s3test.Start(t)
	bucket := srv.Bucket(t)
	h := newBinHosts(t)
	// A box's process runs as the box's user, which must pass through
	// every folder above the box's.
	if err := local.Passable(h.root, os.TempDir()); err != nil {
		t.Fatal(err)
	}
	env := bucketEnv(bucket, "BOXSNAP_HOSTS_INTERVAL=5s")
	hostA, baseA := h.start("host-a", env, "serve")
	_, baseB := h.start("host-b", env, "serve")
	tok, err := personToken(ctx, baseA, Password)
	if err != nil {
		t.Fatal(err)
	}
	onA, onB := newSoakHTTP(baseA, tok), newSoakHTTP(baseB, tok)
	conn, err := pgx.Connect(ctx, strings.TrimSuffix(h.dsn, " pool_max_conns=12"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	// The move: amber-fox runs a process on host-a.
	var made struct {
		ID string `json:"id"`
	}
	if err := onA.do(ctx, "PUT", "/api/v1/templates/sleeper", map[string]any{"backend": "local", "kind": "linux", "command": "sleep 600"}, nil); err != nil {
		t.Fatalf("save a box template: %v", err)
	}
	if err := onA.do(ctx, "POST", "/api/v1/boxes", map[string]string{"name": "amber-fox", "template": "sleeper"}, &made); err != nil {
		t.Fatalf("make amber-fox on host-a: %v", err)
	}
	amber := made.ID
	dirA, dirB := h.boxDir("host-a", amber), h.boxDir("host-b", amber)
	pidA := boxPid(ctx, t, h, "host-a", amber)
	takeSnapshots(ctx, t, onA, "amber-fox", dirA, 2)
	ready := readyIDs(ctx, t, conn, amber)
	calm := stoppedBox(ctx, t, h, onA, "host-a", "calm-owl")
	shipped := bucketKeys(ctx, t, srv, bucket.Bucket)
	var op struct {
		Operation struct {
			ID string `json:"id"`
		} `json:"operation"`
	}
	move := func(box string) {
		t.Helper()
		if err := onB.do(ctx, "POST", "/api/v1/boxes/"+box+"/move", map[string]string{"host": "host-b"}, &op); err != nil {
			t.Fatalf("move %s to host-b: %v", box, err)
		}
		if state := waitEnded(ctx, t, onB, op.Operation.ID); state != "done" {
			t.Fatalf("the move of %s ended %s", box, state)
		}
	}
	move("calm-owl")
	move("amber-fox")
	moved := time.Now()
	// amber-fox ran on host-a, so it runs on host-b, as a restore of a
	// running box starts it again; calm-owl, stopped, stays stopped.
	if pidB := boxPid(ctx, t, h, "host-b", amber); pidB == pidA {
		t.Fatalf("amber-fox on host-b runs host-a's process %d", pidA)
	}
	if running, pid := boxRuns(t, h, "host-b", calm); running || pid != 0 {
		t.Fatalf("calm-owl, stopped on host-a, runs on host-b after its move (marked running %v, process %d)", running, pid)
	}
	stateA := filepath.Join(h.dataDir("host-a"), "local", "state", amber+".json")
	for _, p := range []string{dirA, stateA} {
		waitNoPath(ctx, t, p, hosts.LeftQuiet+time.Minute)
	}
	waitDead(t, pidA, 10*time.Second)
	t.Logf("host-a's copy of amber-fox and its process gone %s after the move", time.Since(moved).Round(time.Second))
	takeSnapshots(ctx, t, onB, "amber-fox", dirB, 1)
	// Running on host-b, it may have automatic snapshots there too.
	if got := readyIDs(ctx, t, conn, amber); len(got) < len(ready)+1 || !containsAll(got, ready) {
		t.Fatalf("amber-fox's ready snapshots after a take on host-b: %v; before the move: %v", got, ready)
	}
	if got := bucketKeys(ctx, t, srv, bucket.Bucket); len(got) <= len(shipped) || !containsAll(got, shipped) {
		t.Fatalf("the bucket held %d keys before the move and holds %d, not all of them: the old copy's release deleted some", len(shipped), len(got))
	}
	if _, err := os.Stat(dirB); err != nil {
		t.Fatalf("amber-fox on host-b: %v", err)
	}

	// The takeover of a host that died mid-take, and of a box running a
	// process there.
	if err := onA.do(ctx, "POST", "/api/v1/boxes", map[string]string{"name": "cedar-elm", "template": "sleeper"}, &made); err != nil {
		t.Fatalf("make cedar-elm on host-a: %v", err)
	}
	cedar := made.ID
	dirCedar := h.boxDir("host-a", cedar)
	boxPid(ctx, t, h, "host-a", cedar)
	takeSnapshots(ctx, t, onA, "cedar-elm", dirCedar, 1)
	brisk := makeBox(ctx, t, onA, "brisk-lake")
	dirBrisk := h.boxDir("host-a", brisk)
	takeSnapshots(ctx, t, onA, "brisk-lake", dirBrisk, 1)
	writeMany(t, dirBrisk, "never taken")
	ops := watchRows(ctx, t, h.dsn, "e2e_operations", "operations")
	if err := onA.do(ctx, "POST", "/api/v1/boxes/brisk-lake/snapshots", map[string]string{"name": "cut short"}, &op); err != nil {
		t.Fatalf("take brisk-lake on host-a: %v", err)
	}
	cut := op.Operation.ID
	killWhenStarted(ctx, t, ops, conn, hostA, cut)
	waitUnlocked(ctx, t, conn, cut)
	h.longGone(ctx, t, "host-a")
	if err := onB.do(ctx, "POST", "/api/v1/hosts/host-a/gone", nil, nil); err != nil {
		t.Fatalf("mark host-a gone: %v", err)
	}
	var taken hosts.TakeOverResult
	if err := onB.do(ctx, "POST", "/api/v1/hosts/host-a/takeover", map[string]string{}, &taken); err != nil || len(taken.Taken) != 2 {
		t.Fatalf("take host-a's boxes over on host-b: %+v %v", taken, err)
	}
	for _, m := range taken.Taken {
		if state := waitEnded(ctx, t, onB, m.Operation); state != "done" {
			t.Fatalf("the takeover's restore of %s ended %s", m.Name, state)
		}
	}
	var state, snapState string
	var words *string
	if err := conn.QueryRow(ctx, `SELECT o.state, o.error, s.state FROM operations o JOIN snapshots s ON s.id = o.target WHERE o.id = $1`, cut).Scan(&state, &words, &snapState); err != nil {
		t.Fatal(err)
	}
	want := hosts.EndedGoneWords("host-a", "host-b")
	if state != "failed" || words == nil || *words != want || snapState != "failed" {
		t.Fatalf("the take host-a left running: %s, %v, its snapshot %s; want failed, %q, failed", state, words, snapState, want)
	}
	var boxLog struct {
		Events []struct {
			Kind, Words string
			Operation   *string `json:"operation"`
		} `json:"events"`
	}
	if err := onB.do(ctx, "GET", "/api/v1/boxes/brisk-lake/log", nil, &boxLog); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(boxLog.Events, func(e struct {
		Kind, Words string
		Operation   *string `json:"operation"`
	}) bool {
		return e.Kind == hosts.EvEndedGone && e.Operation != nil && *e.Operation == cut && strings.Contains(e.Words, "host-a, gone, ended")
	}) {
		t.Fatalf("brisk-lake's log says nothing of the take host-a left: %+v", boxLog.Events)
	}
	onHostB := h.boxDir("host-b", brisk)
	if _, err := os.Stat(filepath.Join(onHostB, "note-00.txt")); err != nil {
		t.Fatalf("brisk-lake on host-b lacks its last snapshot's file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(onHostB, "many")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("brisk-lake on host-b holds what the cut-short take was taking: %v", err)
	}
	boxPid(ctx, t, h, "host-b", cedar) // it ran on host-a: it runs on host-b

	// cedar-elm is released on host-b while host-a is away. When host-a
	// comes back, its copy there belongs to no box: it is kept, found, its
	// process stopped and not started again, and the released box's log
	// says where it is.
	if err := onB.do(ctx, "POST", "/api/v1/boxes/cedar-elm/release?wait=true", nil, &op); err != nil {
		t.Fatalf("release cedar-elm on host-b: %v", err)
	}
	if err := onB.do(ctx, "POST", "/api/v1/boxes/cedar-elm/trash/empty", nil, &op); err != nil {
		t.Fatalf("empty cedar-elm from the trash on host-b: %v", err)
	}
	if state := waitEnded(ctx, t, onB, op.Operation.ID); state != "done" {
		t.Fatalf("cedar-elm's release from the trash ended %s", state)
	}
	if err := conn.QueryRow(ctx, "SELECT state FROM boxes WHERE id = $1", cedar).Scan(&state); err != nil || state != "released" {
		t.Fatalf("cedar-elm after the trash was emptied: %s %v", state, err)
	}
	past := time.Now().Add(-hosts.LeftQuiet - time.Minute) // its copy left unchanged since host-a's kill
	for _, p := range []string{dirCedar, filepath.Join(h.dataDir("host-a"), "local", "state", cedar+".json")} {
		if err := os.Chtimes(p, past, past); err != nil {
			t.Fatal(err)
		}
	}
	h.start("host-a", env, "serve")
	waitPath(ctx, t, filepath.Join(h.dataDir("host-a"), "local", "state", cedar+".found"), time.Minute)
	if running, pid := boxRuns(t, h, "host-a", cedar); running || pid != 0 {
		t.Fatalf("cedar-elm, released, runs on host-a after it came back (marked running %v, process %d)", running, pid)
	}
	if _, err := os.Stat(filepath.Join(dirCedar, "note-00.txt")); err != nil {
		t.Fatalf("cedar-elm's copy on host-a was not kept: %v", err)
	}
	if err := onB.do(ctx, "GET", "/api/v1/boxes/"+cedar+"/log", nil, &boxLog); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(boxLog.Events, func(e struct {
		Kind, Words string
		Operation   *string `json:"operation"`
	}) bool {
		return e.Kind == hosts.EvLeftFound && strings.Contains(e.Words, "host-a") && strings.Contains(e.Words, dirCedar)
	}) {
		t.Fatalf("released cedar-elm's log says nothing of its copy kept on host-a: %+v", boxLog.Events)
	}
}

// waitPath fails the test unless path is there within d, looked for at
// each entry written in its folder, which must be there.
func waitPath(ctx context.Context, t *testing.T, path string, d time.Duration) {
	t.Helper()
	if !watchDirs(t, 0, filepath.Dir(path)).until(ctx, d, func() bool {
		_, err := os.Lstat(path)
		return err == nil
	}) {
		t.Fatalf("%s is not there %s on", path, d)
	}
}

// boxPid waits up to a minute for the local box id on host to run a
// process, and answers its process ID, read from its state file at each
// write in the host's state folder.
func boxPid(ctx context.Context, t *testing.T, h *binHosts, host, id string) int {
	t.Helper()
	file := filepath.Join(h.dataDir(host), "local", "state", id+".json")
	pid := 0
	if watchDirs(t, 0, filepath.Dir(file)).until(ctx, time.Minute, func() bool {
		var st struct {
			Proc *struct {
				Pid int `json:"pid"`
			} `json:"proc"`
		}
		if b, err := os.ReadFile(file); err == nil && json.Unmarshal(b, &st) == nil && st.Proc != nil && st.Proc.Pid > 0 &&
			syscall.Kill(st.Proc.Pid, 0) == nil {
			pid = st.Proc.Pid
		}
		return pid != 0
	}) {
		return pid
	}
	b, _ := os.ReadFile(file)
	t.Fatalf("box %s runs no process on %s within a minute; its state: %s", id, host, b)
	return 0
}

// stoppedBox makes a local box named name on host whose process writes
// past its disk bound, so the backend stops it; once it is stopped, its
// file is removed and a snapshot is taken of it, stopped. It answers the
// box's ID.
func stoppedBox(ctx context.Context, t *testing.T, h *binHosts, api *soakHTTP, host, name string) string {
	t.Helper()
	if err := api.do(ctx, "PUT", "/api/v1/templates/filler", map[string]any{"backend": "local", "kind": "linux",
		"command": "head -c 4000000 /dev/zero > fill; sleep 600", "limits": map[string]any{"diskBytes": 1 << 20}}, nil); err != nil {
		t.Fatalf("save a box template: %v", err)
	}
	var made struct {
		ID string `json:"id"`
	}
	if err := api.do(ctx, "POST", "/api/v1/boxes", map[string]string{"name": name, "template": "filler"}, &made); err != nil {
		t.Fatalf("make %s: %v", name, err)
	}
	boxPid(ctx, t, h, host, made.ID)
	// The backend marks it stopped once its process has ended.
	if !watchDirs(t, 0, filepath.Join(h.dataDir(host), "local", "state")).until(ctx, time.Minute, func() bool {
		running, pid := boxRuns(t, h, host, made.ID)
		return !running && pid == 0
	}) {
		t.Fatalf("%s did not stop at its disk bound within a minute", name)
	}
	dir := h.boxDir(host, made.ID)
	if err := os.Remove(filepath.Join(dir, "fill")); err != nil {
		t.Fatal(err)
	}
	takeSnapshots(ctx, t, api, name, dir, 1)
	return made.ID
}

// boxRuns reads the local box id's state file on host: whether it is
// marked running, and its process ID while that process is alive (0 for
// none).
func boxRuns(t *testing.T, h *binHosts, host, id string) (running bool, pid int) {
	t.Helper()
	var st struct {
		Running bool `json:"running"`
		Proc    *struct {
			Pid int `json:"pid"`
		} `json:"proc"`
	}
	b, err := os.ReadFile(filepath.Join(h.dataDir(host), "local", "state", id+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("box %s's state on %s: %v", id, host, err)
	}
	if st.Proc != nil && st.Proc.Pid > 0 && syscall.Kill(st.Proc.Pid, 0) == nil {
		pid = st.Proc.Pid
	}
	return st.Running, pid
}

// readyIDs are the IDs of box's ready snapshots, sorted.
func readyIDs(ctx context.Context, t *testing.T, conn *pgx.Conn, box string) []string {
	t.Helper()
	rows, err := conn.Query(ctx, "SELECT id FROM snapshots WHERE box_id = $1 AND state = 'ready'", box)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	return ids
}

// waitNoPath fails the test unless path is gone within d, looked for at
// each entry removed or renamed in its folder, which must be there.
func waitNoPath(ctx context.Context, t *testing.T, path string, d time.Duration) {
	t.Helper()
	if !watchDirs(t, 0, filepath.Dir(path)).until(ctx, d, func() bool {
		_, err := os.Lstat(path)
		return errors.Is(err, fs.ErrNotExist)
	}) {
		t.Fatalf("%s is still there %s on", path, d)
	}
}

// waitDead fails the test unless the process pid has ended (or is a
// zombie no one reaped) within d.
func waitDead(t *testing.T, pid int, d time.Duration) {
	t.Helper()
	if !waitExited(pid, d) {
		t.Fatalf("process %d still runs %s on", pid, d)
	}
}

// killWhenStarted kills (SIGKILL, as a crash) the process p once the
// operation op has started, its worker at work on it, as watch (of the
// operations' rows) hears; an operation that ended before fails the test:
// the kill missed it.
func killWhenStarted(ctx context.Context, t *testing.T, watch *rowWatch, conn *pgx.Conn, p *soakProc, op string) {
	t.Helper()
	var state, step string
	if !watch.until(ctx, 2*time.Minute, func() bool {
		var started bool
		if err := conn.QueryRow(ctx, "SELECT state, step, started_at IS NOT NULL FROM operations WHERE id = $1", op).Scan(&state, &step, &started); err != nil {
			t.Fatal(err)
		}
		if state != "running" {
			t.Fatalf("operation %s ended %s before its host was killed: the kill missed it", op, state)
		}
		return started && step != "queued"
	}) {
		t.Fatalf("operation %s did not start within 2 minutes", op)
	}
	p.kill()
	t.Logf("killed %s at operation %s's step %s", p.name, op, step)
}

// waitUnlocked waits up to 30 seconds for PostgreSQL to end the killed
// process's session that held operation op's lock, queued for that lock
// itself: until then the takeover leaves op to it, as to an operation
// running somewhere alive.
func waitUnlocked(ctx context.Context, t *testing.T, conn *pgx.Conn, op string) {
	t.Helper()
	start := time.Now()
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := conn.Exec(lctx, "SELECT pg_advisory_lock(hashtextextended($1::text, 0))", op); err != nil {
		if lctx.Err() != nil && ctx.Err() == nil {
			t.Fatalf("operation %s's lock is still held 30 s after its process was killed", op)
		}
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_unlock(hashtextextended($1::text, 0))", op); err != nil {
		t.Fatal(err)
	}
	t.Logf("operation %s's lock was free %s after the kill", op, time.Since(start).Round(time.Millisecond))
}

// containsAll says whether sorted holds every key of want.
func containsAll(sorted, want []string) bool {
	for _, k := range want {
		if _, ok := slices.BinarySearch(sorted, k); !ok {
			return false
		}
	}
	return true
}
