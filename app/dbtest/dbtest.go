package dbtest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/pgcluster"
	"github.com/boxsnap/boxsnap/app/store"
)

const (
	// TemplateName is the database every test's database is cloned from.
	TemplateName = "boxsnap_template"

	// setUpTimeout bounds starting the cluster and migrating the template.
	setUpTimeout = 2 * time.Minute

	// dropTimeout bounds dropping a test's database at its end.
	dropTimeout = 30 * time.Second

	// closeTimeout bounds the wait for a test's pool to close.
	closeTimeout = 5 * time.Second

	// folderPrefix names each test binary's cluster folder in os.TempDir().
	folderPrefix = "boxsnap-dbtest-"

	// warmAhead is how many databases are cloned before tests ask. Cloning
	// the template takes 100 to 300 ms on a busy 2-core machine; taking a
	// clone made ahead takes microseconds, so a test waits only when tests
	// ask faster than clones are made.
	warmAhead = 2

	// abandonedAge is the age past which a cluster folder without a cluster
	// (its test binary died during initdb) is removed.
	abandonedAge = time.Hour
)

// current is the suite of this test binary, set by Main. It is the
// package's one variable: New(t) has no other way to find the cluster that
// Main stops after the tests.
var current atomic.Pointer[suite]

// suite is one test binary's cluster and template, made on first use.
type suite struct {
	once    sync.Once
	err     error
	dir     string
	owner   *os.File // the flock that keeps sweep away from dir
	cluster *pgcluster.Cluster
	admin   *pgxpool.Pool // on the postgres database, for CREATE and DROP DATABASE
	n       atomic.Int64

	// warm holds databases cloned ahead of the tests that will ask for them;
	// the warmer goroutine refills it until stopWarming.
	warm        chan warmDB
	stopWarming context.CancelFunc
	warmerDone  chan struct{}
}

// warmDB is a database cloned ahead, or why cloning failed.
type warmDB struct {
	name string
	err  error
}

// Main runs the package's tests and then stops the cluster, if a test
// started one. Use it as os.Exit(dbtest.Main(m)) in TestMain. It starts
// nothing itself: a package whose selected tests never ask for a database
// pays nothing.
func Main(m *testing.M) int {
	s := &suite{}
	current.Store(s)
	code := m.Run()
	current.Store(nil)
	s.close()
	return code
}

// testPoolConnections is a test pool's size: four operations at once.
const testPoolConnections = 12

// New gives the test a fresh database, migrated like boxsnap's, as a pool
// that is closed and a database that is dropped when the test ends.
func New(t testing.TB) *pgxpool.Pool {
	t.Helper()
	dsn := NewDSN(t)
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	// Room for a few operations at once (each holds a connection for its
	// lock and uses another) beside River's own, as boxsnap's pools have.
	cfg.MaxConns = testPoolConnections
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatalf("dbtest: open the test database: %v", err)
	}
	// Runs before NewDSN's drop, which was registered first. Close waits
	// for every acquired connection; a test that never released one gets
	// an error instead of a hang.
	t.Cleanup(func() {
		closed := make(chan struct{})
		go func() { pool.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(closeTimeout):
			t.Errorf("dbtest: the test's pool still has a connection acquired %s after the test: release it (conn.Release, rows.Close)", closeTimeout)
		}
	})
	return pool
}

// NewDSN gives the test a fresh database, migrated like boxsnap's, as a
// connection string (for a test that runs a whole boxsnap process); the
// database is dropped when the test ends, closing any connection left.
func NewDSN(t testing.TB) string {
	t.Helper()
	s := current.Load()
	if s == nil {
		t.Fatal("dbtest: no cluster: the package's TestMain must call os.Exit(dbtest.Main(m))")
	}
	if err := s.ready(); err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	name, err := s.take(t.Context())
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.drop(name); err != nil {
			t.Errorf("dbtest: %v", err)
		}
	})
	return s.cluster.DSN(name)
}

// ready starts the cluster and migrates the template, once.
func (s *suite) ready() error {
	s.once.Do(func() { s.err = s.setUp() })
	return s.err
}

func (s *suite) setUp() error {
	ctx, cancel := context.WithTimeout(context.Background(), setUpTimeout)
	defer cancel()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	sweep(ctx, logger)
	dir, err := os.MkdirTemp("", folderPrefix)
	if err != nil {
		return fmt.Errorf("make a folder for the test cluster: %w", err)
	}
	s.dir = dir
	if s.owner, err = lockOwner(dir); err != nil {
		return fmt.Errorf("lock the test cluster's folder: %w", err)
	}
	// The cluster's OS user must pass through this folder (when the tests
	// run as root, the cluster runs as postgres); it may not list it.
	if err := os.Chmod(dir, 0o711); err != nil {
		return fmt.Errorf("make a folder for the test cluster: %w", err)
	}
	data := filepath.Join(dir, "postgres")
	opts := pgcluster.Options{DataDir: data, ForTests: true, Logger: logger}
	seed, err := ensureSeed(ctx)
	if err == nil {
		err = copyTree(seed, data)
	}
	if err != nil {
		logger.Warn("no seed cluster to copy; running initdb", "err", err)
	}
	s.cluster, err = pgcluster.Start(ctx, opts)
	if err != nil && seed != "" {
		// A seed of another PostgreSQL version, say: start from initdb.
		_ = os.RemoveAll(data)
		s.cluster, err = pgcluster.Start(ctx, opts)
	}
	if err != nil {
		return err
	}
	if err := s.cluster.EnsureDatabase(ctx, TemplateName); err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, s.cluster.DSN(TemplateName))
	if err != nil {
		return fmt.Errorf("open the template database: %w", err)
	}
	err = store.Migrate(ctx, pool, nil)
	// CREATE DATABASE ... TEMPLATE needs the template without connections.
	pool.Close()
	if err != nil {
		return fmt.Errorf("migrate the template database: %w", err)
	}
	s.admin, err = pgxpool.New(ctx, s.cluster.DSN("postgres"))
	if err != nil {
		return fmt.Errorf("open the cluster's postgres database: %w", err)
	}
	s.startWarming()
	return nil
}

// startWarming clones the template ahead of the tests: warmAhead databases
// wait, one in the channel's buffer and one in the warmer's hand.
func (s *suite) startWarming() {
	ctx, cancel := context.WithCancel(context.Background())
	s.warm = make(chan warmDB, warmAhead-1)
	s.stopWarming = cancel
	s.warmerDone = make(chan struct{})
	go func() {
		defer close(s.warmerDone)
		for {
			name, err := s.create(ctx)
			if ctx.Err() != nil {
				return // the cluster stops, and its databases go with it
			}
			select {
			case s.warm <- warmDB{name: name, err: err}:
			case <-ctx.Done():
				return
			}
		}
	}()
}

// take hands out a database cloned ahead.
func (s *suite) take(ctx context.Context) (string, error) {
	select {
	case w := <-s.warm:
		return w.name, w.err
	case <-ctx.Done():
		return "", fmt.Errorf("wait for a test database: %w", ctx.Err())
	}
}

// create clones the template into a new database test_N.
func (s *suite) create(ctx context.Context) (string, error) {
	name := fmt.Sprintf("test_%d", s.n.Add(1))
	sql := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize() + " TEMPLATE " + pgx.Identifier{TemplateName}.Sanitize()
	if _, err := s.admin.Exec(ctx, sql); err != nil {
		return "", fmt.Errorf("create the test database %s: %w", name, err)
	}
	return name, nil
}

// drop removes a test's database, ending its connections.
func (s *suite) drop(name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), dropTimeout)
	defer cancel()
	if _, err := s.admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop the test database %s: %w", name, err)
	}
	return nil
}

// close stops the cluster and removes its folder.
func (s *suite) close() {
	if s.stopWarming != nil {
		s.stopWarming()
		<-s.warmerDone
	}
	if s.admin != nil {
		s.admin.Close()
	}
	if s.cluster != nil {
		ctx, cancel := context.WithTimeout(context.Background(), dropTimeout)
		defer cancel()
		if err := s.cluster.Stop(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "dbtest: %v\n", err)
			return // keep the folder: its log says why
		}
	}
	if s.dir != "" {
		_ = os.RemoveAll(s.dir)
	}
	if s.owner != nil {
		_ = s.owner.Close()
	}
}

// ownerLockName is a file in each test binary's cluster folder that the
// binary holds an exclusive flock on for its whole life, from before its
// cluster exists: sweep never touches the folder of a live binary, even
// while its cluster is being copied or made.
const ownerLockName = "owner.lock"

// lockOwner makes and locks dir's owner lock.
func lockOwner(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, ownerLockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// sweep removes the clusters of test binaries that died without stopping
// theirs (go test's -timeout panics past Main): their server may still run.
// A folder whose owner lock a live test binary holds is left alone; a dead
// one's server is stopped through Start and Stop, which deal with an orphan
// server, and its folder removed.
func sweep(ctx context.Context, logger *slog.Logger) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), folderPrefix+"*"))
	for _, dir := range dirs {
		f, err := os.OpenFile(filepath.Join(dir, ownerLockName), os.O_RDWR, 0)
		if err != nil {
			// Just made by a live binary, or left by one that died at once.
			if fi, err := os.Stat(dir); err == nil && time.Since(fi.ModTime()) > abandonedAge {
				_ = os.RemoveAll(dir)
			}
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			_ = f.Close() // alive
			continue
		}
		data := filepath.Join(dir, "postgres")
		if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); err == nil {
			c, err := pgcluster.Start(ctx, pgcluster.Options{DataDir: data, ForTests: true})
			if err != nil {
				_ = f.Close()
				continue // not one of ours to judge
			}
			if err := c.Stop(ctx); err != nil {
				_ = f.Close()
				continue
			}
		}
		_ = os.RemoveAll(dir)
		_ = f.Close()
		logger.Warn("removed the test cluster of a test binary that died", "dir", dir)
	}
}
