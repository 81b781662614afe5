package jobs_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

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
	periodic := jobs.Periodic(jobs.Deps{Auth: e.Auth, Core: e.Core, Logger: e.Logger})
	if len(periodic) < 7 {
		t.Fatalf("%d periodic jobs, want the sessions' and the core's seven", len(periodic))
	}
	for _, name := range []string{"sessions", "recover", "reconcile", "outside-restores", "room", "expiry", "housekeeping"} {
		res, err := e.Client.Insert(ctx, jobs.SweepArgs{Name: name}, &river.InsertOpts{UniqueOpts: river.UniqueOpts{}})
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			job, err := e.Client.JobGet(ctx, res.Job.ID)
			if err != nil {
				t.Fatal(err)
			}
			if job.State == rivertype.JobStateCompleted {
				break
			}
			if job.State == rivertype.JobStateCancelled || job.State == rivertype.JobStateDiscarded || len(job.Errors) > 0 {
				t.Fatalf("sweep %s: %s %v", name, job.State, job.Errors)
			}
			if time.Now().After(deadline) {
				t.Fatalf("sweep %s still %s after 30 s", name, job.State)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
