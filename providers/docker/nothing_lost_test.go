package docker_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/boxsnap/boxsnap/app/snapshots"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/docker"
	"github.com/boxsnap/boxsnap/providers/providertest"
)

func guestOf(b *snapshots.Box) providers.Guest {
	return providers.Guest{Backend: b.BackendID, Kind: b.Kind, Host: b.Host, Ref: b.GuestRef, Generation: b.Generation}
}

func takeDone(t *testing.T, env interface {
	Wait(testing.TB, *snapshots.Operation) *snapshots.Operation
}, core *snapshots.Service, tk *taking.Take, box, name string) *snapshots.Snapshot {
	t.Helper()
	op, sn, err := tk.Take(context.Background(), snapshots.Owner(), taking.TakeRequest{Box: box, Name: name})
	must(t, err)
	if got := env.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("take %s: %s %s", name, got.State, deref(got.Error))
	}
	sn, _, err = core.Snapshot(context.Background(), snapshots.Owner(), sn.ID)
	must(t, err)
	return sn
}

// TestOrphansQuarantinedDocker: with the database's records gone (a fresh
// database, the same install ID and the same daemon), the next reconcile
// finds every Docker snapshot from its labels, the kept one as kept (its keep
// date read from its tag), the other as found, and deletes none.
func TestOrphansQuarantinedDocker(t *testing.T) {
	t.Parallel()
	own := providertest.NewID("in")
	b := newBackend(t, func(c *docker.Config) { c.Install = own })
	ctx := context.Background()
	env, _, _ := coreEnv(t, b, true, own)
	box := dockerBox(t, env, b, "amber-fox")
	kept := takeDone(t, env, env.Core, env.Take, box.Name, "kept one")
	plain := takeDone(t, env, env.Core, env.Take, box.Name, "plain one")
	op, err := env.Keeps.Keep(ctx, snapshots.Owner(), snapshots.KeepRequest{Box: box.Name, Snapshot: kept.ID})
	must(t, err)
	if got := env.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("keep: %s %s", got.State, deref(got.Error))
	}
	kept, _, _ = env.Core.Snapshot(ctx, snapshots.Owner(), kept.ID)
	if kept.KeptUntil == nil {
		t.Fatal("the kept snapshot has no keep date")
	}
	env.Stop()

	fresh, _, _ := coreEnv(t, b, false, own)
	rep, err := fresh.Sweeps.Reconcile(ctx)
	must(t, err)
	if rep.Kept != 1 || rep.Found != 1 || rep.Lost != 0 {
		t.Fatalf("reconcile of a fresh database: %+v; want 1 kept and 1 found", rep)
	}
	sn, _, err := fresh.Core.Snapshot(ctx, snapshots.Owner(), kept.ID)
	must(t, err)
	if sn.KeptUntil == nil || !sn.KeptUntil.Equal(*kept.KeptUntil) || sn.State != snapshots.StateReady || sn.Ref != kept.Ref {
		t.Fatalf("the kept one came back as %+v", sn)
	}
	sn, _, err = fresh.Core.Snapshot(ctx, snapshots.Owner(), plain.ID)
	must(t, err)
	if !sn.Found || sn.KeptUntil != nil || sn.ByKind != "unknown" {
		t.Fatalf("the plain one came back as %+v; want found, by unknown", sn)
	}
	for _, id := range []string{kept.ID, plain.ID} {
		if h, ok := held(t, b, id); !ok || h.Incomplete {
			t.Fatalf("the reconcile deleted or damaged %s: %v %+v", id, ok, h)
		}
	}
	rep, err = fresh.Sweeps.Reconcile(ctx)
	must(t, err)
	if rep.Kept+rep.Found+rep.Recorded+rep.Lost != 0 {
		t.Fatalf("a second reconcile recorded again: %+v", rep)
	}
}

// TestRestartRecoveryDocker kills the worker process (SIGKILL) at each point
// of a take and of a restore on Docker, then starts another worker: each
// operation finishes (the take ready, the restore at its target with its undo
// holding what it replaced, the box running with no container of the swap
// left over); no pin is left and the box never stays paused. A take cut
// anywhere before its tag is taken again: its copier's container, or the
// box's pause, marks it as at work, not incomplete.
func TestRestartRecoveryDocker(t *testing.T) {
	t.Parallel()
	cases := []struct{ kind, stall string }{
		{"take", "take:prepared"}, {"take", "take:paused"}, {"take", "take:copied"}, {"take", "take:committed"}, {"take", "take:unpaused"}, {"take", "take:tagged"},
		{"restore", "take:copied"}, // in the undo's take
		{"restore", "restore:stop"}, {"restore", "restore:rollback"}, {"restore", "restore:renamed-old"},
		{"restore", "restore:started"}, {"restore", "restore:start"}, {"restore", "restore:read-size"},
	}
	for _, c := range cases {
		t.Run(c.kind+" "+c.stall, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			b := newBackend(t)
			env, dsn, root := coreEnv(t, b, false, install)
			box := dockerBox(t, env, b, "amber-fox")
			g := guestOf(box)
			writeState(t, b, g, "v1")
			first := startWorker(t, dsn, root, "")
			target := takeDone(t, env, env.Core, env.Take, box.Name, "a")
			first.kill()
			writeState(t, b, g, "v2")

			w := startWorker(t, dsn, root, c.stall)
			var op *snapshots.Operation
			var taken *snapshots.Snapshot
			var err error
			if c.kind == "take" {
				op, taken, err = env.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: box.Name, Name: "b"})
			} else {
				op, err = env.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: box.Name, Snapshot: target.ID})
			}
			must(t, err)
			w.waitStalled(t)
			w.kill()
			startWorker(t, dsn, root, "")
			wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			done, err := env.Core.Wait(wctx, op.ID)
			must(t, err)
			if done.State == snapshots.OpUnknown {
				if done.Observed == nil || *done.Observed == "" {
					t.Fatal("an unknown operation says nothing of what it observed")
				}
				_, err := env.Core.CheckNow(ctx, snapshots.Owner(), op.ID)
				must(t, err)
				done, _ = env.Core.Wait(wctx, op.ID)
			}
			if done.State != snapshots.OpDone {
				log, _ := os.ReadFile(w.log)
				t.Fatalf("after the restart the %s ended %s at %s: %s (%s)\n%s", c.kind, done.State, done.Step, deref(done.Error), deref(done.Observed), log)
			}
			var pinned int
			must(t, env.Pool.QueryRow(ctx, "SELECT count(*) FROM operations WHERE state IN ('running', 'unknown')").Scan(&pinned))
			if pinned != 0 {
				t.Fatalf("%d operations still pin snapshots", pinned)
			}
			if ci, ok := inspect(t, b, g.Ref); !ok || !ci.Running || ci.Paused {
				t.Fatalf("after the restart the box is %+v (exists %v); want running, not paused", ci, ok)
			}
			for _, name := range []string{g.Ref + "-next", g.Ref + "-prev"} {
				if _, ok := inspect(t, b, name); ok {
					t.Fatalf("%s is left", name)
				}
			}
			switch c.kind {
			case "take":
				sn, _, err := env.Core.Snapshot(ctx, snapshots.Owner(), taken.ID)
				if err != nil || sn.State != snapshots.StateReady {
					t.Fatalf("the take's snapshot: %+v %v", sn, err)
				}
				if h, ok := held(t, b, taken.ID); !ok || h.Incomplete {
					t.Fatalf("the backend lists it %v %+v", ok, h)
				}
				if got := readState(t, b, g); got != "v2" {
					t.Fatalf("the box holds %q after the take", got)
				}
			case "restore":
				if got := readState(t, b, g); got != "v1" {
					t.Fatalf("after the restore the box holds %q, want v1", got)
				}
				if done.UndoID == nil {
					t.Fatal("the restore has no undo")
				}
				rop, err := env.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: box.Name, Snapshot: *done.UndoID, NoUndo: true})
				must(t, err)
				if got, _ := env.Core.Wait(wctx, rop.ID); got.State != snapshots.OpDone {
					t.Fatalf("restoring the undo ended %s: %s", got.State, deref(got.Error))
				}
				if got := readState(t, b, g); got != "v2" {
					t.Fatalf("the undo brought back %q, want v2", got)
				}
			}
		})
	}
}

// TestDockerReconcileSaysContainerRemoved: a box's container removed behind
// boxsnap's back is named by the next reconcile, said once in the box's log
// in words, and its snapshot stays ready and listed.
func TestDockerReconcileSaysContainerRemoved(t *testing.T) {
	t.Parallel()
	own := providertest.NewID("in")
	b := newBackend(t, func(c *docker.Config) { c.Install = own })
	ctx := context.Background()
	env, _, _ := coreEnv(t, b, true, own)
	box := dockerBox(t, env, b, "amber-fox")
	sn := takeDone(t, env, env.Core, env.Take, box.Name, "before")
	rep, err := env.Sweeps.Reconcile(ctx)
	must(t, err)
	if len(rep.GuestsGone) != 0 {
		t.Fatalf("a reconcile with the container there says %v gone", rep.GuestsGone)
	}
	_, err = b.Client().ContainerRemove(ctx, box.GuestRef, client.ContainerRemoveOptions{Force: true})
	must(t, err)
	for i := range 2 {
		rep, err = env.Sweeps.Reconcile(ctx)
		must(t, err)
		if len(rep.GuestsGone) != 1 || rep.GuestsGone[0] != "amber-fox" {
			t.Fatalf("reconcile %d after the removal: gone %v", i+1, rep.GuestsGone)
		}
	}
	log, err := env.Boxes.BoxLog(ctx, snapshots.Owner(), box.ID, 50)
	must(t, err)
	said := 0
	for _, ev := range log {
		if ev.Kind == snapshots.EvGuestGone {
			said++
			if want := "its guest " + box.GuestRef + " is gone from"; !strings.Contains(ev.Words, want) || !strings.Contains(ev.Words, "removed outside boxsnap") {
				t.Fatalf("the log says %q", ev.Words)
			}
		}
	}
	if said != 1 {
		t.Fatalf("the box's log says the guest is gone %d times, want once", said)
	}
	got, _, err := env.Core.Snapshot(ctx, snapshots.Owner(), sn.ID)
	must(t, err)
	if got.State != snapshots.StateReady {
		t.Fatalf("its snapshot is %s", got.State)
	}
}
