package hosts_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/hosts"
	"github.com/boxsnap/boxsnap/jobs"
)

// TestHostWorkOnlyOnHostsWithWorkers: host-a runs a web process only
// (serve --workers=false), host-b a process with workers. The periodic
// hosts job queues host work on host-b, which runs it, and none on host-a,
// where nothing would run it; the hosts list says host-b's workers are
// alive and host-a's are not. A job waiting in host-a's queue is then
// said, in words, to wait with no live worker to run it, and what to do.
func TestHostWorkOnlyOnHostsWithWorkers(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.New(t)
	a := hostEnv(t, pool, "host-a", false, nil)
	b := hostEnv(t, pool, "host-b", true, nil)
	if _, err := b.Client.Insert(ctx, jobs.SweepArgs{Name: "hosts"}, nil); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if jobsIn(t, pool, operations.HostQueue("host-b"), "completed") == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("host-b's host work did not run within 60 s")
		}
	}
	if n := jobsIn(t, pool, operations.HostQueue("host-a"), ""); n != 0 {
		t.Fatalf("%d jobs were queued for host-a, which runs no worker", n)
	}
	byName := func() map[string]hosts.Host {
		list, err := a.Hosts.List(ctx, snapshots.Owner())
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]hosts.Host{}
		for _, h := range list {
			out[h.Name] = h
		}
		return out
	}
	got := byName()
	if ha, hb := got["host-a"], got["host-b"]; !ha.Alive || ha.Working || ha.Stranded != "" || !hb.Alive || !hb.Working || hb.Stranded != "" {
		t.Fatalf("the hosts: %+v", got)
	}

	if _, err := a.Client.Insert(ctx, jobs.HostWorkArgs("host-a"), jobs.HostWorkOpts("host-a")); err != nil {
		t.Fatal(err)
	}
	want := "1 job waits for host host-a and no worker of it is alive to run it: start boxsnap work (or boxsnap serve with its workers) on host-a, or move its boxes to another host."
	if ha := byName()["host-a"]; ha.Waiting != 1 || ha.Stranded != want {
		t.Fatalf("host-a with a job waiting: %+v, want the words %q", ha, want)
	}
	if hb := byName()["host-b"]; hb.Stranded != "" {
		t.Fatalf("host-b, whose worker is alive: %+v", hb)
	}
}

// jobsIn counts the jobs in queue, in state when it is not "".
func jobsIn(t *testing.T, pool *pgxpool.Pool, queue, state string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM river_job WHERE queue = $1 AND ($2 = '' OR state::text = $2)", queue, state).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
