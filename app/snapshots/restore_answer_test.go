package snapshots_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	"github.com/boxsnap/boxsnap/providers"
)

// restoreAnswer reads a finished restore's answer.
func restoreAnswer(t *testing.T, op *snapshots.Operation) restore.RestoreResult {
	t.Helper()
	var res restore.RestoreResult
	if err := json.Unmarshal(op.Result, &res); err != nil {
		t.Fatalf("restore %s answered %s: %v", op.ID, op.Result, err)
	}
	return res
}

// boxRuns reads whether the box runs, from its backend.
func boxRuns(t *testing.T, e *coretest.Env, box string) bool {
	t.Helper()
	st, err := e.Boxes.BoxStatus(context.Background(), snapshots.Owner(), box)
	if err != nil {
		t.Fatal(err)
	}
	return st.Running
}

// TestRestoreAnswerSaysWhatHappened: a restore answers whether processes
// ended and the box's state as they are (box_restore: "whether processes
// ended, ... and the box's state"): a disk restore of a running box ends
// its processes and starts it again; a stopped box ends no process and
// stays stopped.
func TestRestoreAnswerSaysWhatHappened(t *testing.T) {
	t.Parallel()
	e := coretest.New(t, coretest.Options{})
	for _, ran := range []bool{true, false} {
		name := map[bool]string{true: "busy-elk", false: "idle-elk"}[ran]
		b, _ := busyBox(t, e, name)
		target := e.TakeReady(t, snapshots.Owner(), name, "target")
		if !ran {
			if err := e.Local.Stop(context.Background(), providers.Guest{Backend: "local", Kind: b.Kind, Ref: b.GuestRef}); err != nil {
				t.Fatal(err)
			}
		}
		got := restoreEnded(t, e, name, target.ID)
		if got.State != snapshots.OpDone {
			t.Fatalf("the restore of %s ended %s: %s", name, got.State, coretest.Deref(got.Error))
		}
		res := restoreAnswer(t, got)
		want := restore.RestoreResult{Processes: ran, BoxState: map[bool]string{true: restore.BoxRunning, false: restore.BoxStopped}[ran]}
		if res.Processes != want.Processes || res.BoxState != want.BoxState {
			t.Fatalf("a restore of a box that ran %v answered processesEnded %v and boxState %q, want %v and %q",
				ran, res.Processes, res.BoxState, want.Processes, want.BoxState)
		}
		if runs := boxRuns(t, e, name); runs != ran {
			t.Fatalf("after the restore %s runs %v, want %v, as it was before", name, runs, ran)
		}
	}
}

// TestResumedRestoreKnowsTheBoxRan: whether the box ran is recorded on the
// restore before its stop, so a restore resumed after its worker was killed
// past the stop (or at it) starts the box again only when it ran, and its
// answer says so truly.
func TestResumedRestoreKnowsTheBoxRan(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ran   bool
		stall string
	}{{true, "after:rollback"}, {false, "after:rollback"}, {false, "after:stop"}} {
		t.Run(fmt.Sprintf("ran %v, killed %s", c.ran, c.stall), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e, pool, dsn, root := coretest.WorkerCore(t, coretest.Options{})
			var err error
			b := e.Box(t, snapshots.Owner(), "amber-fox")
			a := e.AdmitReady(t, snapshots.Owner(), "amber-fox", "a")
			g := providers.Guest{Backend: "local", Kind: b.Kind, Ref: b.GuestRef}
			if c.ran {
				err = e.Local.Start(ctx, g)
			} else {
				err = e.Local.Stop(ctx, g)
			}
			if err != nil {
				t.Fatal(err)
			}
			if boxRuns(t, e, "amber-fox") != c.ran {
				t.Fatalf("before the restore the box does not run %v", c.ran)
			}
			marker := filepath.Join(t.TempDir(), "stalled")
			first := startWorker(t, dsn, root, c.stall, marker)
			op, err := e.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "amber-fox", Snapshot: a.ID, Replace: true})
			if err != nil {
				t.Fatal(err)
			}
			first.WaitFile(t, marker)
			first.Kill()
			coretest.WaitNoAdvisoryLocks(t, pool)
			startWorker(t, dsn, root, "", "")
			wctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			done, err := e.Core.Wait(wctx, op.ID)
			if err != nil {
				t.Fatal(err)
			}
			if done.State != snapshots.OpDone {
				t.Fatalf("the resumed restore ended %s at %s: %s (%s)", done.State, done.Step, coretest.Deref(done.Error), coretest.Deref(done.Observed))
			}
			if runs := boxRuns(t, e, "amber-fox"); runs != c.ran {
				t.Fatalf("after the resumed restore the box runs %v; it ran %v before", runs, c.ran)
			}
			res := restoreAnswer(t, done)
			state := map[bool]string{true: restore.BoxRunning, false: restore.BoxStopped}[c.ran]
			if res.Processes != c.ran || res.BoxState != state {
				t.Fatalf("the resumed restore answered processesEnded %v and boxState %q; the box ran %v before", res.Processes, res.BoxState, c.ran)
			}
		})
	}
}
