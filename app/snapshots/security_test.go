package snapshots_test

import (
	"context"
	"math"
	"sync"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// TestSettingsCacheCopies: what Settings hands out is the caller's own copy,
// from the cache or from the database: a handler writing into its ceilings
// changes nothing another reader sees (run with -race, readers and writers
// at once are clean). A ceiling of NaN or infinity is refused in words and
// saves nothing.
func TestSettingsCacheCopies(t *testing.T) {
	t.Parallel()
	e := coretest.New(t, coretest.Options{NoWorkers: true})
	ctx := context.Background()
	st := snapshots.DefaultSettings()
	st.Ceilings = map[string]float64{"local": 5}
	if err := e.Core.SaveSettings(ctx, snapshots.Owner(), st); err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // the first read fills the cache, the next ones read it
		got, err := e.Core.Settings(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got.Ceilings["local"] != 5 {
			t.Fatalf("read %d: the ceiling is %v: an earlier reader's change leaked", i, got.Ceilings["local"])
		}
		got.Ceilings["local"] = -1
		got.Ceilings["other"] = 7
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				got, err := e.Core.Settings(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				got.Ceilings["local"]++
			}
		})
	}
	wg.Wait()
	if got, _ := e.Core.Settings(ctx); got.Ceilings["local"] != 5 || len(got.Ceilings) != 1 {
		t.Fatalf("after readers changed their copies, the settings read %v", got.Ceilings)
	}

	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		st.Ceilings = map[string]float64{"local": bad}
		err := e.Core.SaveSettings(ctx, snapshots.Owner(), st)
		if r, ok := snapshots.AsRefusal(err); !ok || r.Words != "The ceiling for local is a number of dollars." {
			t.Fatalf("a ceiling of %v: %v", bad, err)
		}
	}
	if got, _ := e.Core.Settings(ctx); got.Ceilings["local"] != 5 {
		t.Fatalf("a refused save changed the ceiling to %v", got.Ceilings["local"])
	}
}

// TestRecoverFinishesJobsOfEndedOperations: a worker killed after its
// operation ended, before River recorded the job's end, leaves the job
// "running" (River's rescuer would wait an hour). The recovery, which runs
// every RecoverInterval, finishes it as its operation went, so the job
// dashboard agrees with the operations within a minute; a job a resume
// replaced is discarded.
func TestRecoverFinishesJobsOfEndedOperations(t *testing.T) {
	t.Parallel()
	e := coretest.New(t, coretest.Options{})
	ctx := context.Background()
	e.Box(t, snapshots.Owner(), "amber-fox")
	e.TakeReady(t, snapshots.Owner(), "amber-fox", "before")
	var opID string
	if err := e.Pool.QueryRow(ctx, `SELECT id FROM operations WHERE kind = 'take' ORDER BY created_at DESC LIMIT 1`).Scan(&opID); err != nil {
		t.Fatal(err)
	}
	// What a kill -9 leaves: the job running, its operation ended a minute
	// ago; and an earlier attempt that a resume replaced.
	if _, err := e.Pool.Exec(ctx, `UPDATE river_job SET state = 'running', finalized_at = NULL, attempted_at = now() WHERE args->>'op' = $1`, opID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Pool.Exec(ctx, `UPDATE operations SET ended_at = now() - interval '1 minute' WHERE id = $1`, opID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Pool.Exec(ctx, `INSERT INTO river_job (args, kind, max_attempts, queue, state, attempt, attempted_at)
		VALUES (jsonb_build_object('box', '', 'op', $1::text, 'resume', -1), 'operation', 10, 'operations', 'running', 1, now())`, opID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Core.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := e.Pool.Query(ctx, `SELECT (args->>'resume')::int, state::text FROM river_job WHERE args->>'op' = $1 ORDER BY 1`, opID)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]string{}
	for rows.Next() {
		var resume int
		var state string
		if err := rows.Scan(&resume, &state); err != nil {
			t.Fatal(err)
		}
		got[resume] = state
	}
	if got[-1] != "discarded" || got[0] != "completed" || len(got) != 2 {
		t.Fatalf("after the recovery, the jobs of an ended operation are %v, want the replaced attempt discarded and the last completed", got)
	}
}
