package take_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
)

func TestTakeRestoreDelete(t *testing.T) {
	t.Parallel()
	e := coretest.New(t, coretest.Options{})
	ctx := context.Background()
	_, agent, _ := e.Thread(t, "Fix the sign-in flow")
	b := e.Box(t, agent, "amber-fox")
	dir := e.Local.BoxDir(providers.Guest{Ref: b.GuestRef})
	file := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(file, []byte("before"), 0o644); err != nil {
		t.Fatal(err)
	}

	op, sn, err := e.Take.Take(ctx, agent, take.TakeRequest{Box: "amber-fox", Name: "before the migration"})
	if err != nil {
		t.Fatal(err)
	}
	if sn.State != snapshots.StateTaking || !snapshots.ValidID("sn", sn.ID) {
		t.Fatalf("admitted snapshot %+v", sn)
	}
	if got := e.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("take %s: %v", got.State, got.Error)
	}
	sn, _, err = e.Core.Snapshot(ctx, agent, sn.ID)
	if err != nil || sn.State != snapshots.StateReady {
		t.Fatalf("snapshot %+v, %v", sn, err)
	}

	if err := os.WriteFile(file, []byte("after"), 0o644); err != nil {
		t.Fatal(err)
	}
	rop, err := e.Restores.Restore(ctx, agent, snapshots.RestoreRequest{Box: "amber-fox", Snapshot: "before the migration", Replace: true})
	if err != nil {
		t.Fatal(err)
	}
	rop = e.Wait(t, rop)
	if rop.State != snapshots.OpDone {
		t.Fatalf("restore %s: %v %v", rop.State, coretest.Deref(rop.Error), coretest.Deref(rop.Observed))
	}
	if b, _ := os.ReadFile(file); string(b) != "before" {
		t.Fatalf("after the restore the file holds %q", b)
	}
	list, err := e.Core.List(ctx, agent, snapshots.ListQuery{Box: "amber-fox"})
	if err != nil {
		t.Fatal(err)
	}
	var undo *snapshots.Snapshot
	for _, s := range list[0].Snapshots {
		if strings.HasPrefix(s.Name, "before the restore at ") {
			undo = s
		}
	}
	if undo == nil || undo.State != snapshots.StateReady {
		t.Fatalf("no ready undo in %+v", list[0].Snapshots)
	}
	dop, err := e.Keeps.Delete(ctx, agent, snapshots.DeleteRequest{Box: "amber-fox", Snapshot: sn.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Wait(t, dop); got.State != snapshots.OpDone {
		t.Fatalf("delete %s: %v", got.State, coretest.Deref(got.Error))
	}
	if _, _, err := e.Core.Snapshot(ctx, agent, sn.ID); err == nil {
		t.Fatal("deleted snapshot still listed")
	}
}

// TestTakeRunRecordsItsSteps: a take's run records its steps though its reads
// and writes are folded into few statements: the one that makes the record
// ready moves the operation on to the limit's step, and the take's answer
// counts the box's snapshots as they are once it is ready.
func TestTakeRunRecordsItsSteps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := coretest.New(t, coretest.Options{NoWorkers: true})
	e.Box(t, snapshots.Owner(), "step-box")
	e.AdmitReady(t, snapshots.Owner(), "step-box", "first")
	op, sn, err := e.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: "step-box", Name: "second"})
	if err != nil {
		t.Fatal(err)
	}
	runOp(t, e, op)
	done, err := e.Core.Operation(ctx, snapshots.Owner(), op.ID)
	if err != nil {
		t.Fatal(err)
	}
	if done.State != snapshots.OpDone || done.Step != snapshots.StepLimit {
		t.Fatalf("the take ended %s at step %q, want done at %q", done.State, done.Step, snapshots.StepLimit)
	}
	res, err := e.Take.Kinds().Take.Result(done)
	if err != nil {
		t.Fatal(err)
	}
	if res.Snapshot != sn.ID || res.Count != 2 || res.Name != "second" {
		t.Fatalf("the take's answer: %+v, want %s, 2 of the limit", res, sn.ID)
	}
}

// TestTakeRefusedUntilCheckNow: a take on a box whose last operation could
// not be confirmed is refused, saying so, until Check now settles it, before
// the per-box limit's refusal, and the refused take leaves no record of
// itself (its admission writes its records before it reads the box's
// unconfirmed operations, and rolls them back).
func TestTakeRefusedUntilCheckNow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := coretest.New(t, coretest.Options{NoWorkers: true})
	e.Box(t, snapshots.Owner(), "unsure-box")
	first, _, err := e.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: "unsure-box", Name: "first"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Pool.Exec(ctx, `UPDATE operations SET state = 'unknown', step = 'snapshot' WHERE id = $1`, first.ID); err != nil {
		t.Fatal(err)
	}
	unknown, err := e.Core.Operation(ctx, snapshots.Owner(), first.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := snapshots.UnknownWords("unsure-box", unknown) + " Check now first."
	count := func(table string) int {
		t.Helper()
		var n int
		if err := e.Pool.QueryRow(ctx, `SELECT count(*) FROM `+table+` WHERE box_id = (SELECT id FROM boxes WHERE name = 'unsure-box')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	refused := func(what string) {
		t.Helper()
		_, _, err := e.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: "unsure-box", Name: "second"})
		r, ok := snapshots.AsRefusal(err)
		if !ok || r.Code != snapshots.CodeBusy || r.Words != want {
			t.Fatalf("%s: a take answered %v, want the refusal %q", what, err, want)
		}
		if n, m := count("snapshots"), count("operations"); n != 1 || m != 1 {
			t.Fatalf("%s: the refused take left %d snapshots and %d operations on the box, want 1 and 1", what, n, m)
		}
	}
	refused("below the limit")
	st, err := e.Core.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st.PerBox = 1
	if err := e.Core.SaveSettings(ctx, snapshots.Owner(), st); err != nil {
		t.Fatal(err)
	}
	refused("at the limit")
}
