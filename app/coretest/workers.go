package coretest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/providers/local"
)

// Worker is a worker process a test started: the test binary run again,
// which its TestMain turns into a boxsnap worker on the variables it was
// given, until the test kills it.
type Worker struct {
	Cmd *exec.Cmd
	// Log is the file the worker's output goes to.
	Log string
}

// StartWorker starts the test binary again (running no test) with env
// ("NAME=value") added to this process's environment, its output to a log
// of the test's; the worker is killed when the test ends.
func StartWorker(t testing.TB, env ...string) *Worker {
	t.Helper()
	logFile := filepath.Join(t.TempDir(), "worker.log")
	out, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &Worker{Cmd: cmd, Log: logFile}
	t.Cleanup(w.Kill)
	return w
}

// Kill kills the worker process as a crash would: SIGKILL, no clean-up.
func (w *Worker) Kill() {
	if w.Cmd.ProcessState != nil {
		return
	}
	_ = w.Cmd.Process.Signal(syscall.SIGKILL)
	_ = w.Cmd.Wait()
}

// WaitFile waits for a file the worker writes (where it stalls) to appear,
// up to a minute; past it the test fails with the worker's log.
func (w *Worker) WaitFile(t testing.TB, path string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	log, _ := os.ReadFile(w.Log)
	t.Fatalf("the worker never reached its stall; its log:\n%s", log)
}

// WaitNoAdvisoryLocks waits until no session holds an operation's lock: the
// killed worker's connections are gone.
func WaitNoAdvisoryLocks(t testing.TB, pool *pgxpool.Pool) {
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

// WorkerCore is a core on a fresh database that admits and reads but runs
// no jobs (opts.NoWorkers): the worker processes a test starts on the same
// database and local folder (StartWorker) run them. It answers the core,
// its pool, the database's address and the local backend's folder.
func WorkerCore(t testing.TB, opts Options) (*Env, *pgxpool.Pool, string, string) {
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
	e, err := Build(ctx, pool, opts)
	if err != nil {
		t.Fatal(err)
	}
	return e, pool, dsn, opts.LocalRoot
}

// OpLock is a connection of the test's own for an operation's session
// lock, to hold it as another worker's run does, or to ask whether it is
// free.
type OpLock struct {
	// Conn is the connection that holds the lock, for a statement the
	// test sends as the holding worker would.
	Conn *pgxpool.Conn
	t    testing.TB
	id   string
}

// OpLock acquires a connection of e's pool for the lock of operation id,
// released when the test ends; it takes nothing yet.
func (e *Env) OpLock(t testing.TB, id string) *OpLock {
	t.Helper()
	conn, err := e.Pool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Release)
	return &OpLock{Conn: conn, t: t, id: id}
}

// Take takes the lock if nobody holds it, and says whether it did.
func (l *OpLock) Take() bool {
	l.t.Helper()
	var got bool
	if err := l.Conn.QueryRow(context.Background(), `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`, l.id).Scan(&got); err != nil {
		l.t.Fatal(err)
	}
	return got
}

// LetGo lets the lock go; the test fails if this connection did not hold
// it.
func (l *OpLock) LetGo() {
	l.t.Helper()
	var was bool
	if err := l.Conn.QueryRow(context.Background(), `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, l.id).Scan(&was); err != nil || !was {
		l.t.Fatalf("let go of the lock of %s: %v, %v", l.id, was, err)
	}
}

// Free says whether nobody holds the lock now: it takes it and lets it go
// again.
func (l *OpLock) Free() bool {
	l.t.Helper()
	if !l.Take() {
		return false
	}
	l.LetGo()
	return true
}
