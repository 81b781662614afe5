package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/jobs"
)

// TestHousekeepingForgetsOldRetryKeys runs the housekeeping job through
// River: the retry keys made longer ago than they are kept (a tool's kept
// answer, an ended operation's request key) are gone, and recent ones
// stay, so a retry of a recent key answers its first call, and an old
// key's retry does the work again. The old operation itself stays.
func TestHousekeepingForgetsOldRetryKeys(t *testing.T) {
	t.Parallel()
	e := coretest.New(t, coretest.Options{})
	ctx := context.Background()
	_, agent, _ := e.Thread(t, "Retry a take")
	e.Box(t, agent, "amber-fox")
	old := snapshots.ToolAnswersKeptFor + time.Hour
	for _, key := range []string{"old-answer", "new-answer"} {
		if err := e.Core.KeepToolAnswer(ctx, agent, key, snapshots.ToolAnswer{Tool: "box_snapshot", Args: key, Status: 200, Body: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	ops := map[string]*snapshots.Operation{}
	for _, key := range []string{"old-take", "new-take"} {
		op, _, err := e.Take.Take(ctx, agent, take.TakeRequest{Box: "amber-fox", Name: key, RequestID: key})
		if err != nil {
			t.Fatal(err)
		}
		ops[key] = e.Wait(t, op)
	}
	// The old ones were made before the keys' time, as a week's wait
	// would leave them.
	if _, err := e.Pool.Exec(ctx, `UPDATE tool_answers SET created_at = now() - $1::interval WHERE key LIKE '%:old-answer'`, old.String()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Pool.Exec(ctx, `UPDATE operations SET ended_at = now() - $1::interval WHERE id = $2`, old.String(), ops["old-take"].ID); err != nil {
		t.Fatal(err)
	}

	runSweep(t, e, "housekeeping")

	for key, want := range map[string]bool{"old-answer": false, "new-answer": true} {
		a, err := e.Core.KeptToolAnswer(ctx, agent, key)
		if err != nil {
			t.Fatal(err)
		}
		if (a != nil) != want {
			t.Errorf("after housekeeping, the tool answer %s kept: %v, want %v", key, a != nil, want)
		}
	}
	again, _, err := e.Take.Take(ctx, agent, take.TakeRequest{Box: "amber-fox", Name: "new-take", RequestID: "new-take"})
	if err != nil || again.ID != ops["new-take"].ID {
		t.Fatalf("a retry of a recent key made %s (%v), want the first call's %s", idOf(again), err, ops["new-take"].ID)
	}
	again, _, err = e.Take.Take(ctx, agent, take.TakeRequest{Box: "amber-fox", Name: "old-take again", RequestID: "old-take"})
	if err != nil || again.ID == ops["old-take"].ID {
		t.Fatalf("a retry of a forgotten key answered %s (%v), want a new take", idOf(again), err)
	}
	e.Wait(t, again)
	if op, err := e.Core.Operation(ctx, agent, ops["old-take"].ID); err != nil || op.State != snapshots.OpDone {
		t.Fatalf("the old operation after housekeeping: %v, %v", op, err)
	}
}

// runSweep inserts the periodic job name's run and waits for River to
// complete it.
func runSweep(t *testing.T, e *coretest.Env, name string) {
	t.Helper()
	events, cancel := e.Client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled)
	defer cancel()
	res, err := e.Client.Insert(context.Background(), jobs.SweepArgs{Name: name}, &river.InsertOpts{UniqueOpts: river.UniqueOpts{}})
	if err != nil {
		t.Fatal(err)
	}
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.Job.ID != res.Job.ID {
				continue // a periodic run of its own
			}
			if ev.Kind != river.EventKindJobCompleted {
				t.Fatalf("sweep %s: %s %v", name, ev.Job.State, ev.Job.Errors)
			}
			return
		case <-timeout:
			t.Fatalf("sweep %s did not complete within 30 s", name)
		}
	}
}

// idOf is op's ID, or "none".
func idOf(op *snapshots.Operation) string {
	if op == nil {
		return "none"
	}
	return op.ID
}
