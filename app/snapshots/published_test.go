package snapshots_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
)

// TestTakeKilledAfterPublishEndsDone kills the worker (SIGKILL) right after the
// backend published a take's snapshot, before the step was recorded, then
// starts another: the take resumes, finds its snapshot complete on the
// backend and ends done with it ready, not "already held" and failed. The
// same for a restore's undo, which is a take inside the restore.
func TestTakeKilledAfterPublishEndsDone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, what := range []string{"take", "undo"} {
		t.Run(what, func(t *testing.T) {
			t.Parallel()
			e, _, dsn, root := coretest.WorkerCore(t, coretest.Options{})
			box := e.Box(t, snapshots.Owner(), "amber-fox")
			file := filepath.Join(e.Local.BoxDir(providers.Guest{Ref: box.GuestRef}), "state.txt")
			write(t, file, "v1")
			var target *snapshots.Snapshot
			if what == "undo" {
				w := startWorker(t, dsn, root, "", "")
				op, _, err := e.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: "amber-fox", Name: "before"})
				if err != nil {
					t.Fatal(err)
				}
				if target = waitReady(t, e, op); target == nil {
					t.Fatal("the first take made no snapshot")
				}
				w.Kill()
				write(t, file, "v2")
			}
			marker := filepath.Join(t.TempDir(), "stalled")
			w := startWorker(t, dsn, root, "after:snapshot", marker)
			var op *snapshots.Operation
			var err error
			if what == "take" {
				op, _, err = e.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: "amber-fox", Name: "published"})
			} else {
				op, err = e.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "amber-fox", Snapshot: target.Name, Replace: true})
			}
			if err != nil {
				t.Fatal(err)
			}
			w.WaitFile(t, marker)
			w.Kill()

			startWorker(t, dsn, root, "", "")
			wctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			done, err := e.Core.Wait(wctx, op.ID)
			if err != nil {
				t.Fatal(err)
			}
			if done.State != snapshots.OpDone {
				t.Fatalf("after the kill the %s ended %s at %s: %s", what, done.State, done.Step, coretest.Deref(done.Error))
			}
			var id string
			if what == "take" {
				if len(done.Snapshots) != 1 {
					t.Fatalf("the take ended done naming snapshots %v", done.Snapshots)
				}
				id = done.Snapshots[0]
			} else {
				if done.UndoID == nil {
					t.Fatal("the restore ended done with no undo")
				}
				id = *done.UndoID
			}
			sn, _, err := e.Core.Snapshot(ctx, snapshots.Owner(), id)
			if err != nil || sn.State != snapshots.StateReady {
				t.Fatalf("the %s's snapshot after the kill is %+v (%v), want ready", what, sn, err)
			}
		})
	}
}

// waitReady waits for a take to end and answers its snapshot, ready.
func waitReady(t *testing.T, e *coretest.Env, op *snapshots.Operation) *snapshots.Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done, err := e.Core.Wait(ctx, op.ID)
	if err != nil || done.State != snapshots.OpDone || len(done.Snapshots) != 1 {
		t.Fatalf("the take ended %+v (%v)", done, err)
	}
	sn, _, err := e.Core.Snapshot(ctx, snapshots.Owner(), done.Snapshots[0])
	if err != nil || sn.State != snapshots.StateReady {
		t.Fatalf("the take's snapshot is %+v (%v), want ready", sn, err)
	}
	return sn
}
