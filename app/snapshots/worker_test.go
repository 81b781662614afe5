package snapshots_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/jobs"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local"
)

// Worker processes: the test binary started again with these variables runs
// a boxsnap worker (the core, River's workers, the local backend) on the
// test's database and folder, as `boxsnap work` does, until it is killed.
const (
	workerEnv    = "BOXSNAP_TEST_WORKER"
	workerDSN    = "BOXSNAP_TEST_DSN"
	workerRoot   = "BOXSNAP_TEST_ROOT"
	workerStall  = "BOXSNAP_TEST_STALL"  // "before:rollback", "after:snapshot", ...
	workerMarker = "BOXSNAP_TEST_MARKER" // a file the worker writes when it stalls
	// workerRecover is the worker's recover interval ("1s"; empty: the
	// default), workerReady a file it writes once it works.
	workerRecover = "BOXSNAP_TEST_RECOVER"
	workerReady   = "BOXSNAP_TEST_READY"
)

func runWorkerProcess() int {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(os.Getenv(workerDSN))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg.MaxConns = 12 // as dbtest's pools: four operations at once beside River's own
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	stall, marker := os.Getenv(workerStall), os.Getenv(workerMarker)
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var every jobs.Intervals
	if v := os.Getenv(workerRecover); v != "" {
		if every.Recover, err = time.ParseDuration(v); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	e, err := coretest.Build(ctx, pool, coretest.Options{LocalRoot: os.Getenv(workerRoot), Logger: logger, Intervals: every,
		Wrap: func(b snapshots.Backend) snapshots.Backend {
			if stall != "" {
				b.Snap = &stallBackend{Backend: b.Snap, at: stall, marker: marker}
			}
			return b
		}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := e.Core.Recover(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	if ready := os.Getenv(workerReady); ready != "" {
		_ = os.WriteFile(ready, []byte(e.Jobs.WorkerID()), 0o644)
	}
	select {} // until killed
}

// stallBackend stops forever before or after one backend call, after writing
// its marker, so the test can kill the process exactly there.
type stallBackend struct {
	providers.Backend
	at     string // "before:<step>" or "after:<step>"
	marker string
}

func (s *stallBackend) point(when, step string) {
	if s.at == when+":"+step {
		_ = os.WriteFile(s.marker, []byte(s.at), 0o644)
		select {}
	}
}

func (s *stallBackend) Snapshot(ctx context.Context, g providers.Guest, take providers.SnapshotTake, rec providers.Recorder) (providers.SnapshotTaken, error) {
	s.point("before", "snapshot")
	t, err := s.Backend.Snapshot(ctx, g, take, rec)
	s.point("after", "snapshot")
	return t, err
}

func (s *stallBackend) RestoreSnapshot(ctx context.Context, g providers.Guest, ref providers.SnapshotRef, step providers.RestoreStep, rec providers.Recorder) (providers.RestoreProgress, error) {
	s.point("before", string(step))
	p, err := s.Backend.RestoreSnapshot(ctx, g, ref, step, rec)
	s.point("after", string(step))
	return p, err
}

func (s *stallBackend) DeleteSnapshot(ctx context.Context, ref providers.SnapshotRef, rec providers.Recorder) error {
	s.point("before", "delete")
	err := s.Backend.DeleteSnapshot(ctx, ref, rec)
	s.point("after", "delete")
	return err
}

// workerProcess is a running worker process.
type workerProcess struct {
	cmd *exec.Cmd
	log string
}

// startWorker starts a worker process on dsn and root, stalling at stall
// ("" for none).
func startWorker(t *testing.T, dsn, root, stall, marker string) *workerProcess {
	t.Helper()
	return startWorkerEnv(t, dsn, root, stall, marker)
}

// startWorkerEnv is startWorker with more of the worker's variables
// (workerRecover, workerReady), each "NAME=value".
func startWorkerEnv(t *testing.T, dsn, root, stall, marker string, env ...string) *workerProcess {
	t.Helper()
	logFile := filepath.Join(t.TempDir(), "worker.log")
	out, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), workerEnv+"=1", workerDSN+"="+dsn, workerRoot+"="+root, workerStall+"="+stall, workerMarker+"="+marker)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &workerProcess{cmd: cmd, log: logFile}
	t.Cleanup(func() { w.kill() })
	return w
}

// kill kills the worker process as a crash would: SIGKILL, no clean-up.
func (w *workerProcess) kill() {
	if w.cmd.ProcessState != nil {
		return
	}
	_ = w.cmd.Process.Signal(syscall.SIGKILL)
	_ = w.cmd.Wait()
}

// waitFile waits for a file to appear, up to a minute.
func waitFile(t *testing.T, path string, w *workerProcess) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	log, _ := os.ReadFile(w.log)
	t.Fatalf("the worker never reached its stall; its log:\n%s", log)
}

// waitNoAdvisoryLocks waits until no session holds an operation's lock: the
// killed worker's connections are gone.
func waitNoAdvisoryLocks(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var n int
		if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND a.application_name <> 'boxsnap presence' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())").Scan(&n); err == nil && n == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("a killed worker's advisory lock outlived it by 30 s")
}

// workerCore is a core on a fresh database that admits and reads but runs
// no jobs (opts.NoWorkers): the worker processes a test starts on the same
// database and local folder (startWorker) run them. It answers the core, its
// pool, the database's address and the local backend's folder.
func workerCore(t *testing.T, opts coretest.Options) (*coretest.Env, *pgxpool.Pool, string, string) {
	t.Helper()
	ctx := context.Background()
	dsn := dbtest.NewDSN(t)
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	opts.LocalRoot, opts.NoWorkers = t.TempDir(), true
	// Each local box is a file system of its own (a loop mount, as root):
	// unmounted once the workers are ended, before the folder is removed.
	t.Cleanup(func() { _ = local.UnmountAll(opts.LocalRoot) })
	e, err := coretest.Build(ctx, pool, opts)
	if err != nil {
		t.Fatal(err)
	}
	return e, pool, dsn, opts.LocalRoot
}
