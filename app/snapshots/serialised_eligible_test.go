package snapshots_test

import (
	"context"
	"sync"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
)

func restoreTo(t *testing.T, e *coretest.Env, c snapshots.Caller, box, snap string) *snapshots.Operation {
	t.Helper()
	op, err := e.Restores.Restore(context.Background(), c, snapshots.RestoreRequest{Box: box, Snapshot: snap, Replace: true})
	if err != nil {
		t.Fatalf("restore %s: %v", snap, err)
	}
	op = e.Wait(t, op)
	if op.State != snapshots.OpDone {
		t.Fatalf("restore %s ended %s: %s (%s)", snap, op.State, coretest.Deref(op.Error), coretest.Deref(op.Observed))
	}
	return op
}

func names(t *testing.T, e *coretest.Env, box string) map[string]*snapshots.Snapshot {
	t.Helper()
	list, err := e.Core.List(context.Background(), snapshots.Owner(), snapshots.ListQuery{Box: box})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*snapshots.Snapshot{}
	for _, s := range list[0].Snapshots {
		out[s.Name] = s
	}
	return out
}

// TestSerialisedAndEligible: the operations on a box run one at a time, and
// whether a snapshot may undergo a change is checked at the moment of the
// change, on every path: two takes at once, a take and a release, a take and
// a restore, a delete and a restore, and a repeated request each end in one
// consistent state; a restore's undo and target stay while a restore needs
// them.
func TestSerialisedAndEligible(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("takes at once run one after the other and end in one consistent state", func(t *testing.T) {
		t.Parallel()
		e := coretest.New(t, coretest.Options{})
		_, agent, _ := e.Thread(t, "Fix the sign-in flow")
		e.Box(t, agent, "amber-fox")
		var wg sync.WaitGroup
		ops := make([]*snapshots.Operation, 3)
		for i := range ops {
			wg.Add(1)
			go func() {
				defer wg.Done()
				op, _, err := e.Take.Take(ctx, agent, taking.TakeRequest{Box: "amber-fox"})
				if err != nil {
					t.Error(err)
					return
				}
				ops[i] = op
			}()
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		for i := range ops {
			if ops[i] = e.Wait(t, ops[i]); ops[i].State != snapshots.OpDone {
				t.Fatalf("take %d ended %s: %s", i, ops[i].State, coretest.Deref(ops[i].Error))
			}
		}
		for i := range ops {
			for j := i + 1; j < len(ops); j++ {
				if first, second := order(ops[i], ops[j]); second.StartedAt.Before(*first.EndedAt) {
					t.Fatalf("a take started at %v, before the one before it ended at %v", second.StartedAt, first.EndedAt)
				}
			}
		}
		got := names(t, e, "amber-fox")
		if len(got) != len(ops) {
			t.Fatalf("want %d snapshots with distinct names, got %v", len(ops), keys(got))
		}
		// Each is ready, its take told once in the box log; the box's head
		// is one of them, and none was taken from it (the head would have
		// moved on to that one).
		events, err := e.Boxes.BoxLog(ctx, snapshots.Owner(), "amber-fox", 0)
		if err != nil {
			t.Fatal(err)
		}
		told := map[string]int{}
		for _, ev := range events {
			if ev.Kind == snapshots.EvSnapshotTaken && ev.SnapshotID != nil {
				told[*ev.SnapshotID]++
			}
		}
		box, err := e.Core.Box(ctx, snapshots.Owner(), "amber-fox")
		if err != nil {
			t.Fatal(err)
		}
		if box.HeadID == nil {
			t.Fatal("the box has no head after three takes")
		}
		headIsOne := false
		for name, sn := range got {
			if sn.State != snapshots.StateReady {
				t.Errorf("‘%s’ is %s, want ready", name, sn.State)
			}
			if told[sn.ID] != 1 {
				t.Errorf("‘%s’ is told %d times in the box log, want once", name, told[sn.ID])
			}
			if sn.ID == *box.HeadID {
				headIsOne = true
			}
			if sn.ParentID != nil && *sn.ParentID == *box.HeadID {
				t.Errorf("‘%s’ was taken from the head %s, yet the head did not move on to it", name, *box.HeadID)
			}
		}
		if !headIsOne {
			t.Errorf("the box's head %s is none of its takes", *box.HeadID)
		}
	})

	t.Run("take and release", func(t *testing.T) {
		t.Parallel()
		e := coretest.New(t, coretest.Options{})
		_, agent, _ := e.Thread(t, "Write the API guide")
		e.Box(t, agent, "brisk-lake")
		top, sn, err := e.Take.Take(ctx, agent, taking.TakeRequest{Box: "brisk-lake"})
		if err != nil {
			t.Fatal(err)
		}
		rop, err := e.Boxes.ReleaseBox(ctx, agent, "brisk-lake", "")
		if err != nil {
			t.Fatal(err)
		}
		top, rop = e.Wait(t, top), e.Wait(t, rop)
		if top.State != snapshots.OpDone || rop.State != snapshots.OpDone {
			t.Fatalf("take %s, release %s (%s)", top.State, rop.State, coretest.Deref(rop.Error))
		}
		if rop.StartedAt.Before(*top.EndedAt) {
			t.Fatal("the release started before the take it waited for ended")
		}
		// The release moved the box to the trash; emptying it deletes.
		eop, err := e.Boxes.EmptyTrash(ctx, snapshots.Owner(), "brisk-lake", "")
		if err != nil {
			t.Fatal(err)
		}
		if eop = e.Wait(t, eop); eop.State != snapshots.OpDone {
			t.Fatalf("emptying the trash ended %s: %s", eop.State, coretest.Deref(eop.Error))
		}
		if _, _, err := e.Core.Snapshot(ctx, snapshots.Owner(), sn.ID); err == nil {
			t.Fatal("the release kept an unkept snapshot")
		}
		if held, _ := e.Local.HeldSnapshots(ctx); len(held) != 0 {
			t.Fatalf("the backend still holds %d snapshots", len(held))
		}
	})

	t.Run("take and restore", func(t *testing.T) {
		t.Parallel()
		e := coretest.New(t, coretest.Options{})
		_, agent, _ := e.Thread(t, "Try the upgrade")
		e.Box(t, agent, "calm-dune")
		a := e.TakeReady(t, agent, "calm-dune", "a")
		top, _, err := e.Take.Take(ctx, agent, taking.TakeRequest{Box: "calm-dune", Name: "b"})
		if err != nil {
			t.Fatal(err)
		}
		rop, err := e.Restores.Restore(ctx, agent, snapshots.RestoreRequest{Box: "calm-dune", Snapshot: a.ID, Replace: true})
		if err != nil {
			t.Fatal(err)
		}
		top, rop = e.Wait(t, top), e.Wait(t, rop)
		if top.State != snapshots.OpDone || rop.State != snapshots.OpDone {
			t.Fatalf("take %s, restore %s", top.State, rop.State)
		}
		if rop.StartedAt.Before(*top.EndedAt) {
			t.Fatal("the restore started before the take ended")
		}
	})

	t.Run("delete and restore", func(t *testing.T) {
		t.Parallel()
		// Workers off: each admitted operation stays, pinning its snapshot,
		// so the order is exact.
		e := coretest.New(t, coretest.Options{NoWorkers: true})
		_, agent, _ := e.Thread(t, "Clean up")
		e.Box(t, agent, "dusky-elm")
		a := e.AdmitReady(t, agent, "dusky-elm", "a")
		b := e.AdmitReady(t, agent, "dusky-elm", "b")
		if _, err := e.Keeps.Delete(ctx, agent, snapshots.DeleteRequest{Box: "dusky-elm", Snapshot: a.ID}); err != nil {
			t.Fatal(err)
		}
		_, err := e.Restores.Restore(ctx, agent, snapshots.RestoreRequest{Box: "dusky-elm", Snapshot: a.ID, Replace: true})
		coretest.RefusedWith(t, err, "‘a’ is in use: it is being deleted")
		rop, err := e.Restores.Restore(ctx, agent, snapshots.RestoreRequest{Box: "dusky-elm", Snapshot: b.ID, Replace: true})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.Keeps.Delete(ctx, agent, snapshots.DeleteRequest{Box: "dusky-elm", Snapshot: b.ID})
		coretest.RefusedWith(t, err, "‘b’ is in use: the restore at")
		// A take admitted while nothing is ready yet cannot be deleted.
		_, x, err := e.Take.Take(ctx, agent, taking.TakeRequest{Box: "dusky-elm", Name: "x"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.Keeps.Delete(ctx, agent, snapshots.DeleteRequest{Box: "dusky-elm", Snapshot: x.ID})
		coretest.RefusedWith(t, err, "‘x’ is in use: it is being taken")
		if rop.Step != snapshots.StepWaiting {
			t.Fatalf("the restore, asked behind the delete, is at %s, want waiting", rop.Step)
		}
	})

	t.Run("a repeated request is the same operation", func(t *testing.T) {
		t.Parallel()
		e := coretest.New(t, coretest.Options{})
		_, agent, _ := e.Thread(t, "Fix the sign-in flow")
		e.Box(t, agent, "eager-fern")
		a := e.TakeReady(t, agent, "eager-fern", "a")
		b := e.TakeReady(t, agent, "eager-fern", "b")
		req := snapshots.RestoreRequest{Box: "eager-fern", Snapshot: a.ID, Replace: true, RequestID: "req-1"}
		op1, err := e.Restores.Restore(ctx, agent, req)
		if err != nil {
			t.Fatal(err)
		}
		op2, err := e.Restores.Restore(ctx, agent, req)
		if err != nil || op2.ID != op1.ID {
			t.Fatalf("repeat: %v, %v (first %s)", op2, err, op1.ID)
		}
		req.Snapshot = b.ID
		_, err = e.Restores.Restore(ctx, agent, req)
		coretest.RefusedWith(t, err, "req-1", "another operation")
		// Another thread's same request ID is its own.
		_, other, _ := e.Thread(t, "Another")
		e.Box(t, other, "fair-grove")
		e.TakeReady(t, other, "fair-grove", "c")
		if _, err := e.Restores.Restore(ctx, other, snapshots.RestoreRequest{Box: "fair-grove", Snapshot: "c", Replace: true, RequestID: "req-1"}); err != nil {
			t.Fatalf("another thread's request ID collided: %v", err)
		}
		e.Wait(t, op1)
		if n := len(undos(names(t, e, "eager-fern"))); n != 1 {
			t.Fatalf("a repeated restore took %d undos", n)
		}
	})

	t.Run("restore twice then restore the oldest undo: the target stays", func(t *testing.T) {
		t.Parallel()
		e := coretest.New(t, coretest.Options{})
		_, agent, _ := e.Thread(t, "Fix the sign-in flow")
		e.Box(t, agent, "grey-heron")
		a := e.TakeReady(t, agent, "grey-heron", "a")
		first := restoreTo(t, e, agent, "grey-heron", a.ID)
		restoreTo(t, e, agent, "grey-heron", a.ID)
		oldest := undoOf(t, e, first)
		restoreTo(t, e, agent, "grey-heron", oldest.ID)
		got := names(t, e, "grey-heron")
		if _, ok := got[oldest.Name]; !ok {
			t.Fatalf("the target ‘%s’ was replaced: %v", oldest.Name, keys(got))
		}
		if n := len(undos(got)); n != snapshots.UndosPerBox {
			t.Fatalf("the box holds %d undos, want %d: %v", n, snapshots.UndosPerBox, keys(got))
		}
	})

	t.Run("restore twice, keep the oldest undo, restore again: it stays", func(t *testing.T) {
		t.Parallel()
		e := coretest.New(t, coretest.Options{})
		_, agent, _ := e.Thread(t, "Fix the sign-in flow")
		e.Box(t, agent, "hazel-isle")
		a := e.TakeReady(t, agent, "hazel-isle", "a")
		first := restoreTo(t, e, agent, "hazel-isle", a.ID)
		restoreTo(t, e, agent, "hazel-isle", a.ID)
		oldest := undoOf(t, e, first)
		kop, err := e.Keeps.Keep(ctx, snapshots.Owner(), snapshots.KeepRequest{Snapshot: oldest.ID})
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Wait(t, kop); got.State != snapshots.OpDone {
			t.Fatalf("keep ended %s: %s", got.State, coretest.Deref(got.Error))
		}
		restoreTo(t, e, agent, "hazel-isle", a.ID)
		restoreTo(t, e, agent, "hazel-isle", a.ID)
		got := names(t, e, "hazel-isle")
		if s, ok := got[oldest.Name]; !ok || !s.Kept() {
			t.Fatalf("the kept undo ‘%s’ did not stay kept: %v", oldest.Name, keys(got))
		}
		if n := len(undos(got)); n != snapshots.UndosPerBox {
			t.Fatalf("the box holds %d undos besides the kept one: %v", n, keys(got))
		}
	})

	t.Run("a restore's target is refused for bulk delete, bulk keep and rename, and named", func(t *testing.T) {
		t.Parallel()
		// Workers off: the restore stays admitted, pinning its target.
		e := coretest.New(t, coretest.Options{NoWorkers: true})
		_, agent, _ := e.Thread(t, "Fix the sign-in flow")
		b := e.Box(t, agent, "icy-jay")
		_ = b
		sn := e.AdmitReady(t, agent, "icy-jay", "before the migration")
		rop, err := e.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "icy-jay", Snapshot: sn.ID})
		if err != nil {
			t.Fatal(err)
		}
		at := rop.CreatedAt.In(e.Core.TimeZone(ctx)).Format("15:04")
		for _, try := range []struct {
			what string
			err  error
		}{
			{"delete", func() error {
				_, err := e.Keeps.Delete(ctx, snapshots.Owner(), snapshots.DeleteRequest{Snapshot: sn.ID})
				return err
			}()},
			{"keep", func() error {
				_, err := e.Keeps.Keep(ctx, snapshots.Owner(), snapshots.KeepRequest{Snapshot: sn.ID})
				return err
			}()},
			{"rename", func() error { _, err := e.Keeps.Rename(ctx, snapshots.Owner(), "", sn.ID, "new name"); return err }()},
		} {
			if try.err == nil {
				t.Fatalf("%s of the restore's target was allowed", try.what)
			}
			coretest.RefusedWith(t, try.err, "‘before the migration’ is in use: the restore at "+at+" uses it.")
		}
		if got := names(t, e, "icy-jay"); got["before the migration"] == nil || got["before the migration"].State != snapshots.StateReady {
			t.Fatal("the target changed")
		}
	})
}

func undoOf(t *testing.T, e *coretest.Env, op *snapshots.Operation) *snapshots.Snapshot {
	t.Helper()
	if op.UndoID == nil {
		got, err := e.Core.Operation(context.Background(), snapshots.Owner(), op.ID)
		if err != nil || got.UndoID == nil {
			t.Fatalf("restore %s has no undo", op.ID)
		}
		op = got
	}
	sn, _, err := e.Core.Snapshot(context.Background(), snapshots.Owner(), *op.UndoID)
	if err != nil {
		t.Fatal(err)
	}
	return sn
}

func undos(m map[string]*snapshots.Snapshot) []string {
	var out []string
	for n, s := range m {
		if s.IsUndo() {
			out = append(out, n)
		}
	}
	return out
}

func keys(m map[string]*snapshots.Snapshot) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func order(a, b *snapshots.Operation) (*snapshots.Operation, *snapshots.Operation) {
	if a.StartedAt.Before(*b.StartedAt) {
		return a, b
	}
	return b, a
}
