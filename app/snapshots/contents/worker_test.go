package contents_test

import (
	"context"
	"fmt"
	"io"
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
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local"
)

// Worker processes: the test binary started again with these variables runs
// a boxsnap worker (the core, Contents, River's workers, the local backend)
// on the test's database and folder, as `boxsnap work` does, until it is
// killed. The import's crash test kills one just after the backend
// published.
const (
	workerEnv    = "BOXSNAP_TEST_WORKER"
	workerDSN    = "BOXSNAP_TEST_DSN"
	workerRoot   = "BOXSNAP_TEST_ROOT"
	workerStall  = "BOXSNAP_TEST_STALL"  // "after:import" or ""
	workerMarker = "BOXSNAP_TEST_MARKER" // a file the worker writes when it stalls
)

// runWorkerProcess runs the worker the variables above describe.
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
	e, err := coretest.Build(ctx, pool, coretest.Options{LocalRoot: os.Getenv(workerRoot), Logger: logger,
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
	select {} // until killed
}

// stallBackend stops forever before or after the import's publish, after
// writing its marker, so the test can kill the process exactly there; its
// export is the backend's it wraps.
type stallBackend struct {
	providers.Backend
	at     string // "before:import" or "after:import"
	marker string
}

func (s *stallBackend) point(when string) {
	if s.at == when+":import" {
		_ = os.WriteFile(s.marker, []byte(s.at), 0o644)
		select {}
	}
}

func (s *stallBackend) Scrub(ctx context.Context, ref providers.SnapshotRef, sec providers.Secrets) (*providers.ScrubReport, error) {
	return s.Backend.(providers.Exporter).Scrub(ctx, ref, sec)
}

func (s *stallBackend) ExportSnapshot(ctx context.Context, ref providers.SnapshotRef, opts providers.ExportOptions, w io.Writer) error {
	return s.Backend.(providers.Exporter).ExportSnapshot(ctx, ref, opts, w)
}

func (s *stallBackend) ImportSnapshots(ctx context.Context, opts providers.ImportOptions, archives []io.Reader) ([]providers.ImportedSnapshot, error) {
	s.point("before")
	got, err := s.Backend.(providers.Exporter).ImportSnapshots(ctx, opts, archives)
	s.point("after")
	return got, err
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
	logFile := filepath.Join(t.TempDir(), "worker.log")
	out, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), workerEnv+"=1", workerDSN+"="+dsn, workerRoot+"="+root, workerStall+"="+stall, workerMarker+"="+marker)
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
