package snapshots_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
)

// TestRestartRecovery kills the worker process (SIGKILL, as a crash) at each
// recorded step of a take, a delete and a restore, before and after the
// backend's call, then starts another worker: each operation finishes, or
// says what it could not confirm and settles on Check now; no pin outlives
// its operation; and the box is what the operation said.
func TestRestartRecovery(t *testing.T) {
	t.Parallel()
	type kase struct {
		kind  string
		stall string
	}
	var cases []kase
	for _, w := range []string{"before", "after"} {
		cases = append(cases, kase{"take", w + ":snapshot"}, kase{"delete", w + ":delete"})
		for _, step := range []string{"snapshot", "stop", "rollback", "start", "read-size"} {
			cases = append(cases, kase{"restore", w + ":" + step})
		}
	}
	for _, c := range cases {
		t.Run(c.kind+" "+c.stall, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			// The test's own core admits operations and reads records; it
			// runs no jobs: the worker processes do.
			e, pool, dsn, root := coretest.WorkerCore(t, coretest.Options{})
			var err error
			_, agent, _ := e.Thread(t, "Fix the sign-in flow")
			b := e.Box(t, agent, "amber-fox")
			// A running box: its restore stops it and starts it again.
			if err := e.Local.Start(ctx, providers.Guest{Backend: "local", Kind: b.Kind, Ref: b.GuestRef}); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(e.Local.BoxDir(providers.Guest{Ref: b.GuestRef}), "state.txt")
			write(t, file, "v1")
			a := e.AdmitReady(t, agent, "amber-fox", "a")
			write(t, file, "v2")

			marker := filepath.Join(t.TempDir(), "stalled")
			first := startWorker(t, dsn, root, c.stall, marker)
			var op *snapshots.Operation
			var taken *snapshots.Snapshot
			switch c.kind {
			case "take":
				op, taken, err = e.Take.Take(ctx, agent, taking.TakeRequest{Box: "amber-fox", Name: "b"})
			case "delete":
				op, err = e.Keeps.Delete(ctx, agent, snapshots.DeleteRequest{Box: "amber-fox", Snapshot: a.ID})
			case "restore":
				op, err = e.Restores.Restore(ctx, agent, snapshots.RestoreRequest{Box: "amber-fox", Snapshot: a.ID, Replace: true})
			}
			if err != nil {
				t.Fatal(err)
			}
			first.WaitFile(t, marker)
			first.Kill()
			cut, err := e.Core.Operation(ctx, snapshots.Owner(), op.ID)
			if err != nil {
				t.Fatal(err)
			}
			if cut.State != snapshots.OpRunning {
				t.Fatalf("after the kill the operation is %s, want running", cut.State)
			}
			coretest.WaitNoAdvisoryLocks(t, pool)

			startWorker(t, dsn, root, "", "")
			wctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			done, err := e.Core.Wait(wctx, op.ID)
			if err != nil {
				t.Fatal(err)
			}
			if done.State == snapshots.OpUnknown {
				if done.Observed == nil || *done.Observed == "" {
					t.Fatal("an unknown operation says nothing of what it observed")
				}
				if _, err := e.Core.CheckNow(ctx, snapshots.Owner(), op.ID); err != nil {
					t.Fatal(err)
				}
				done, _ = e.Core.Wait(wctx, op.ID)
			}
			if done.State != snapshots.OpDone {
				t.Fatalf("after the restart the %s ended %s at %s: %s (%s)", c.kind, done.State, done.Step, coretest.Deref(done.Error), coretest.Deref(done.Observed))
			}
			var pinned int
			if err := pool.QueryRow(ctx, "SELECT count(*) FROM operations WHERE state IN ('running', 'unknown')").Scan(&pinned); err != nil || pinned != 0 {
				t.Fatalf("%d operations still pin snapshots (%v)", pinned, err)
			}

			held, err := e.Local.HeldSnapshots(ctx)
			if err != nil {
				t.Fatal(err)
			}
			all := names(t, e, "amber-fox")
			switch c.kind {
			case "take":
				sn, _, err := e.Core.Snapshot(ctx, snapshots.Owner(), taken.ID)
				if err != nil || sn.State != snapshots.StateReady {
					t.Fatalf("the take's snapshot: %+v %v", sn, err)
				}
				if len(held) != 2 || len(all) != 2 {
					t.Fatalf("the backend holds %d snapshots and the records list %d, want 2 and 2", len(held), len(all))
				}
			case "delete":
				if len(held) != 0 || len(all) != 0 {
					t.Fatalf("after the delete the backend holds %d and the records list %v", len(held), keys(all))
				}
			case "restore":
				if got := read(t, file); got != "v1" {
					t.Fatalf("after the restore the box holds %q, want v1", got)
				}
				undo := undoOf(t, e, done)
				if undo.State != snapshots.StateReady || len(held) != 2 || len(all) != 2 {
					t.Fatalf("undo %s; the backend holds %d, the records list %v", undo.State, len(held), keys(all))
				}
				// The undo holds exactly what the restore replaced.
				rop, err := e.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "amber-fox", Snapshot: undo.ID, NoUndo: true})
				if err != nil {
					t.Fatal(err)
				}
				if got, _ := e.Core.Wait(wctx, rop.ID); got.State != snapshots.OpDone {
					t.Fatalf("restoring the undo ended %s", got.State)
				}
				if got := read(t, file); got != "v2" {
					t.Fatalf("the undo brought back %q, want v2", got)
				}
			}
		})
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRestartRecoveryMidReplace kills the worker while a step deletes what
// its operation replaces (a restore's oldest undo, an agent's sixth's
// oldest), before and after the backend's delete, then starts another worker:
// the operation resumes at that step, not from its start; it runs its backend
// steps and logs its events once; and it finishes the delete the kill cut
// short, so the box holds its 2 undos or its 5 snapshots, none left deleting,
// and the backend holds what the records list.
func TestRestartRecoveryMidReplace(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"restore", "take"} {
		for _, when := range []string{"before", "after"} {
			t.Run(kind+" "+when+":delete", func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				e, pool, dsn, root := coretest.WorkerCore(t, coretest.Options{})
				var err error
				_, agent, _ := e.Thread(t, "Fix the sign-in flow")
				b := e.Box(t, agent, "amber-fox")
				file := filepath.Join(e.Local.BoxDir(providers.Guest{Ref: b.GuestRef}), "state.txt")
				write(t, file, "v1")
				a := e.AdmitReady(t, agent, "amber-fox", "a")
				switch kind {
				case "restore":
					// Two restores first: the box holds its 2 undos.
					for i := 0; i < 2; i++ {
						op, err := e.Restores.Restore(ctx, agent, snapshots.RestoreRequest{Box: "amber-fox", Snapshot: a.ID, Replace: true})
						if err != nil {
							t.Fatal(err)
						}
						runOp(t, e, op)
					}
				case "take":
					for _, n := range []string{"b", "c", "d", "e"} {
						e.AdmitReady(t, agent, "amber-fox", n)
					}
				}
				write(t, file, "v2")

				marker := filepath.Join(t.TempDir(), "stalled")
				first := startWorker(t, dsn, root, when+":delete", marker)
				var op *snapshots.Operation
				if kind == "restore" {
					op, err = e.Restores.Restore(ctx, agent, snapshots.RestoreRequest{Box: "amber-fox", Snapshot: a.ID, Replace: true})
				} else {
					op, _, err = e.Take.Take(ctx, agent, taking.TakeRequest{Box: "amber-fox", Name: "f"})
				}
				if err != nil {
					t.Fatal(err)
				}
				first.WaitFile(t, marker)
				first.Kill()
				coretest.WaitNoAdvisoryLocks(t, pool)
				startWorker(t, dsn, root, "", "")
				if _, err := e.Core.Recover(ctx); err != nil {
					t.Fatal(err)
				}
				wctx, cancel := context.WithTimeout(ctx, time.Minute)
				defer cancel()
				done, err := e.Core.Wait(wctx, op.ID)
				if err != nil {
					t.Fatal(err)
				}
				if done.State != snapshots.OpDone {
					t.Fatalf("after the restart the %s ended %s at %s: %s (%s)", kind, done.State, done.Step, coretest.Deref(done.Error), coretest.Deref(done.Observed))
				}

				all := names(t, e, "amber-fox")
				undos, others := 0, 0
				for _, sn := range all {
					if sn.State != snapshots.StateReady {
						t.Errorf("‘%s’ is %s after the %s ended", sn.Name, sn.State, kind)
					}
					if sn.IsUndo() {
						undos++
					} else {
						others++
					}
				}
				held, err := e.Local.HeldSnapshots(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if len(held) != len(all) {
					t.Errorf("the backend holds %d snapshots and the records list %d", len(held), len(all))
				}
				switch kind {
				case "restore":
					if undos != snapshots.UndosPerBox || others != 1 {
						t.Errorf("after the restore the box holds %d undos and %d others, want %d and 1: %v", undos, others, snapshots.UndosPerBox, keys(all))
					}
					if got := read(t, file); got != "v1" {
						t.Errorf("after the restore the box holds %q, want v1", got)
					}
				case "take":
					if others != 5 || undos != 0 {
						t.Errorf("after the take the box holds %d snapshots, want 5: %v", others, keys(all))
					}
				}
				// Its events, once each: the resume did not run it again from
				// its start.
				events, err := e.Boxes.BoxLog(ctx, snapshots.Owner(), "amber-fox", 100)
				if err != nil {
					t.Fatal(err)
				}
				count := map[string]int{}
				for _, ev := range events {
					if ev.OperationID != nil && *ev.OperationID == op.ID {
						count[ev.Kind]++
					}
				}
				want := map[string]int{snapshots.EvRestoreAsked: 1, snapshots.EvRestored: 1, snapshots.EvSnapshotDeleted: 1}
				if kind == "take" {
					want = map[string]int{snapshots.EvSnapshotTaken: 1, snapshots.EvSnapshotDeleted: 1}
				}
				for k, n := range want {
					if count[k] != n {
						t.Errorf("the %s logged %d ‘%s’ events, want %d (all: %v)", kind, count[k], k, n, count)
					}
				}
			})
		}
	}
}
