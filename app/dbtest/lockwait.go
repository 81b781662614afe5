package dbtest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// WaitBlocked waits until some session of pool's database waits for a lock
// (pg_stat_activity's wait_event_type is Lock), and fails the test after 30
// s: a test that holds a row in a transaction and starts a statement that
// must wait for it learns that the statement got to the row and waits,
// rather than guessing from a pause that it did. ended reports whether the
// waiter ended already, which fails the test at once with what.
func WaitBlocked(t testing.TB, pool *pgxpool.Pool, what string, ended func() bool) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if ended() {
			t.Fatalf("%s: it ended while the test held the lock", what)
		}
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: after 30 s no session waits for a lock", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
