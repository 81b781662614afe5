package snapshots_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/jobs"
)

// TestOneAtATimeAcrossTwoWorkers asks for many operations on one box at once,
// with two worker processes taking jobs: they run one at a time, in the order
// asked, and each starts when the one before ends (the next job is inserted
// in the transaction that ends the one before; no polling loop).
func TestOneAtATimeAcrossTwoWorkers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, pool, dsn, root := coretest.WorkerCore(t, coretest.Options{})
	startWorker(t, dsn, root, "", "")
	startWorker(t, dsn, root, "", "")
	_, agent, _ := e.Thread(t, "Fix the sign-in flow")
	e.Box(t, agent, "amber-fox")
	e.Box(t, agent, "brisk-lake") // a second box's operations run beside

	// Two snapshots to restore to, ready before the burst.
	for _, name := range []string{"a", "b"} {
		op, _, err := e.Take.Take(ctx, agent, taking.TakeRequest{Box: "amber-fox", Name: name})
		if err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		_, _ = e.Core.Wait(wctx, op.ID)
		cancel()
	}
	// Asked all at once: takes and restores on amber-fox, takes on
	// brisk-lake beside them.
	plan := []struct{ kind, box, name string }{
		{"take", "amber-fox", "s0"}, {"take", "brisk-lake", "b0"}, {"restore", "amber-fox", "a"},
		{"take", "amber-fox", "s1"}, {"take", "brisk-lake", "b1"}, {"restore", "amber-fox", "b"},
		{"take", "amber-fox", "s2"}, {"take", "brisk-lake", "b2"}, {"restore", "amber-fox", "a"},
		{"restore", "amber-fox", "b"},
	}
	n := len(plan)
	var ops []*snapshots.Operation
	for _, p := range plan {
		var op *snapshots.Operation
		var err error
		if p.kind == "restore" {
			op, err = e.Restores.Restore(ctx, agent, snapshots.RestoreRequest{Box: p.box, Snapshot: p.name, Replace: true})
		} else {
			op, _, err = e.Take.Take(ctx, agent, taking.TakeRequest{Box: p.box, Name: p.name})
		}
		if err != nil {
			t.Fatalf("%s %s: %v", p.kind, p.name, err)
		}
		ops = append(ops, op)
	}
	byBox := map[string][]*snapshots.Operation{}
	for _, op := range ops {
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		done, err := e.Core.Wait(wctx, op.ID)
		cancel()
		if err != nil || done.State != snapshots.OpDone {
			t.Fatalf("operation %s ended %v: %v", op.ID, done.State, err)
		}
		byBox[*done.BoxID] = append(byBox[*done.BoxID], done)
	}
	var gaps []time.Duration
	for box, list := range byBox {
		slices.SortFunc(list, func(a, b *snapshots.Operation) int { return int(a.Seq - b.Seq) })
		for i := 1; i < len(list); i++ {
			prev, next := list[i-1], list[i]
			if next.StartedAt.Before(*prev.EndedAt) {
				t.Fatalf("box %s: %s (asked %d) started at %v, before %s (asked %d) ended at %v",
					box, next.ID, next.Seq, next.StartedAt, prev.ID, prev.Seq, prev.EndedAt)
			}
			gaps = append(gaps, next.StartedAt.Sub(*prev.EndedAt))
		}
	}
	var workers int
	if err := pool.QueryRow(ctx, "SELECT count(DISTINCT attempted_by[1]) FROM river_job WHERE kind = 'operation'").Scan(&workers); err != nil {
		t.Fatal(err)
	}
	slices.Sort(gaps)
	t.Logf("%d operations on 2 boxes by %d worker processes; from one operation's end to the next one's start: median %v, max %v",
		n, workers, gaps[len(gaps)/2], gaps[len(gaps)-1])
}

// TestManyOperationsOnASmallPool: operations on many boxes at once on the
// smallest pool a worker accepts all end: River runs only as many at once as
// the pool can hold beside its own connections. A smaller pool is refused
// with words (on pgxpool's default of 4, River's completer and a running
// operation could each wait for the other's connection).
func TestManyOperationsOnASmallPool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := dbtest.NewDSN(t)
	small := func(n int32) *pgxpool.Pool {
		cfg, err := pgxpool.ParseConfig(dsn)
		if err != nil {
			t.Fatal(err)
		}
		cfg.MaxConns = n
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		return pool
	}
	if _, err := coretest.Build(ctx, small(4), coretest.Options{LocalRoot: t.TempDir()}); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("need at least %d", jobs.MinPoolConnections)) {
		t.Fatalf("a pool of 4 for workers: %v", err)
	}
	e, err := coretest.Build(ctx, small(jobs.MinPoolConnections), coretest.Options{LocalRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	_, agent, _ := e.Thread(t, "Fix the sign-in flow")
	var ops []*snapshots.Operation
	for i := 0; i < 8; i++ {
		e.Box(t, agent, "box-"+string(rune('a'+i)))
	}
	for i := 0; i < 8; i++ {
		op, _, err := e.Take.Take(ctx, agent, taking.TakeRequest{Box: "box-" + string(rune('a'+i))})
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, op)
	}
	for _, op := range ops {
		if got := e.Wait(t, op); got.State != snapshots.OpDone {
			t.Fatalf("take %s ended %s", op.ID, got.State)
		}
	}
}
