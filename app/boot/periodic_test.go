package boot_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/boot"
)

// sweepNames are every periodic job serve runs (jobs/periodic.go's table).
var sweepNames = []string{"sessions", "recover", "reconcile", "outside-restores", "room", "expiry", "automatic", "thinning", "trash", "housekeeping"}

// TestPeriodicJobsKeepRunning runs serve with every interval set to a second
// (the BOXSNAP_*_INTERVAL settings) and waits until each periodic job has
// run at least three times: a periodic job's run, once finished, never keeps
// the next out (River's default unique states include completed, which let
// each run once in the process's life).
func TestPeriodicJobsKeepRunning(t *testing.T) {
	t.Parallel()
	env := map[string]string{"BOXSNAP_PASSWORD": password}
	for _, v := range []string{"RECOVER", "RECONCILE", "OUTSIDE", "ROOM", "EXPIRY", "TRASH", "HOUSEKEEPING", "AUTOMATIC", "THINNING"} {
		env["BOXSNAP_"+v+"_INTERVAL"] = "1s"
	}
	cfg := testConfig(t, env)
	started := time.Now()
	start(t, cfg, boot.Options{})
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, cfg.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	const want = 3
	deadline := time.Now().Add(45 * time.Second)
	for {
		runs := map[string]int{}
		rows, err := pool.Query(ctx, "SELECT args->>'name', count(*) FROM river_job WHERE kind = 'sweep' AND state = 'completed' GROUP BY 1")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var name string
			var n int
			if err := rows.Scan(&name, &n); err != nil {
				t.Fatal(err)
			}
			runs[name] = n
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		short := ""
		for _, name := range sweepNames {
			if runs[name] < want {
				short += fmt.Sprintf(" %s:%d", name, runs[name])
			}
		}
		if short == "" {
			t.Logf("every periodic job ran %d times or more within %s: %v", want, time.Since(started).Round(100*time.Millisecond), runs)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s, periodic jobs that ran fewer than %d times (completed runs):%s", time.Since(started).Round(time.Second), want, short)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
