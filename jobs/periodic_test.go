package jobs_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/jobs"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

// TestEverySweepRuns inserts each periodic job's args and waits for River to
// complete it: every periodic job has its worker, and each sweep runs on a
// real core.
func TestEverySweepRuns(t *testing.T) {
	t.Parallel()
	e := coretest.New(t, coretest.Options{})
	ctx := context.Background()
	periodic := jobs.Periodic(jobs.Deps{Auth: e.Auth, Core: e.Core, Sweeps: e.Sweeps, Logger: e.Logger})
	if len(periodic) < 9 {
		t.Fatalf("%d periodic jobs, want the sessions' and the core's nine", len(periodic))
	}
	events, cancel := e.Client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled)
	defer cancel()
	for _, name := range []string{"sessions", "recover", "reconcile", "outside-restores", "room", "expiry", "automatic", "thinning", "trash", "housekeeping"} {
		res, err := e.Client.Insert(ctx, jobs.SweepArgs{Name: name}, &river.InsertOpts{UniqueOpts: river.UniqueOpts{}})
		if err != nil {
			t.Fatal(err)
		}
		timeout := time.After(30 * time.Second)
		for done := false; !done; {
			select {
			case ev := <-events:
				if ev.Job.ID != res.Job.ID {
					continue // a periodic run of its own
				}
				if ev.Kind != river.EventKindJobCompleted {
					t.Fatalf("sweep %s: %s %v", name, ev.Job.State, ev.Job.Errors)
				}
				done = true
			case <-timeout:
				t.Fatalf("sweep %s did not complete within 30 s", name)
			}
		}
	}
}
