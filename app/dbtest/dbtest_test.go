package dbtest

import (
	"context"
	"os"
	"runtime"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestTwoTestsGetSeparateDatabases(t *testing.T) {
	t.Parallel()
	a, b := New(t), New(t)
	if _, err := a.Exec(t.Context(), "INSERT INTO owner (password_hash) VALUES ('only in a')"); err != nil {
		t.Fatal(err)
	}
	var inA, inB int
	if err := a.QueryRow(t.Context(), "SELECT count(*) FROM owner").Scan(&inA); err != nil {
		t.Fatal(err)
	}
	if err := b.QueryRow(t.Context(), "SELECT count(*) FROM owner").Scan(&inB); err != nil {
		t.Fatal(err)
	}
	if inA != 1 || inB != 0 {
		t.Errorf("a row in one test database must be absent from the other: a has %d, b has %d", inA, inB)
	}
	if currentDB(t, a) == currentDB(t, b) {
		t.Errorf("both pools are on %s", currentDB(t, a))
	}
}

func TestTemplateHasRiverAndAppTables(t *testing.T) {
	t.Parallel()
	pool := New(t)
	for _, table := range []string{"river_job", "river_leader", "owner", "install", "sessions"} {
		var found bool
		if err := pool.QueryRow(t.Context(), "SELECT to_regclass($1) IS NOT NULL", table).Scan(&found); err != nil {
			t.Fatal(err)
		}
		if !found {
			t.Errorf("the test database lacks table %s", table)
		}
	}
}

func TestDatabaseGoneAfterTest(t *testing.T) {
	t.Parallel()
	var name string
	t.Run("uses a database", func(t *testing.T) {
		name = currentDB(t, New(t))
		// A connection still open at the end must not keep it alive.
		conn, err := pgx.Connect(t.Context(), NewDSN(t))
		if err != nil {
			t.Fatal(err)
		}
		_ = conn // never closed
	})
	if name == "" {
		t.Fatal("the subtest got no database")
	}
	s := current.Load()
	var exists bool
	if err := s.admin.QueryRow(t.Context(), "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Errorf("database %s is still there after its test ended", name)
	}
}

func TestNewDSNConnects(t *testing.T) {
	t.Parallel()
	dsn := NewDSN(t)
	pool, err := pgxpool.New(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var n int
	if err := pool.QueryRow(t.Context(), "SELECT count(*) FROM river_job").Scan(&n); err != nil || n != 0 {
		t.Errorf("a fresh database has an empty river_job: n=%d err=%v", n, err)
	}
}

func currentDB(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	var name string
	if err := pool.QueryRow(context.Background(), "SELECT current_database()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	return name
}

// BenchmarkNewDatabase measures what each test pays for its database: one
// cloned from the template, a pool's first connection, and the drop at its
// end. "ready" is a test that finds a clone made ahead (tests that do some
// work of their own); "back-to-back" asks with nothing in between, so it
// waits for each clone to be made.
func BenchmarkNewDatabase(b *testing.B) {
	s := current.Load()
	if err := s.ready(); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	use := func(b *testing.B) {
		name, err := s.take(ctx)
		if err != nil {
			b.Fatal(err)
		}
		pool, err := pgxpool.New(ctx, s.cluster.DSN(name))
		if err != nil {
			b.Fatal(err)
		}
		if err := pool.Ping(ctx); err != nil {
			b.Fatal(err)
		}
		pool.Close()
		if err := s.drop(name); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("ready", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			for len(s.warm) < cap(s.warm) {
				runtime.Gosched() // let the warmer finish its clone
			}
			b.StartTimer()
			use(b)
		}
	})
	b.Run("back-to-back", func(b *testing.B) {
		for b.Loop() {
			use(b)
		}
	})
}
