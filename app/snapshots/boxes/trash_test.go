package boxes_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
)

// release releases a box and waits for its release to end done.
func release(t *testing.T, e *coretest.Env, c snapshots.Caller, box string) *snapshots.Operation {
	t.Helper()
	op, err := e.Boxes.ReleaseBox(context.Background(), c, box, "")
	if err != nil {
		t.Fatalf("release %s: %v", box, err)
	}
	op = e.Wait(t, op)
	if op.State != snapshots.OpDone {
		t.Fatalf("release %s ended %s: %s", box, op.State, coretest.Deref(op.Error))
	}
	return op
}

func boxState(t *testing.T, e *coretest.Env, box string) string {
	t.Helper()
	b, err := e.Core.Box(context.Background(), snapshots.Owner(), box)
	if err != nil {
		t.Fatal(err)
	}
	return string(b.State)
}

// TestTrashRestoresBox: releasing a box takes a final snapshot and moves the
// box to the trash, stopped, with its folder and its snapshots; restoring it
// from the trash gives it back ready, started as it ran, with its history and
// the final snapshot in it.
func TestTrashRestoresBox(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := coretest.New(t, coretest.Options{})
	b := e.Box(t, snapshots.Owner(), "amber-fox")
	dir := e.Local.BoxDir(providers.Guest{Ref: b.GuestRef})
	if err := os.WriteFile(filepath.Join(dir, "work.txt"), []byte("monday"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := e.TakeReady(t, snapshots.Owner(), b.Name, "before the migration")
	if err := os.WriteFile(filepath.Join(dir, "work.txt"), []byte("tuesday"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := e.Local.Start(ctx, providers.Guest{Ref: b.GuestRef, Kind: b.Kind}); err != nil {
		t.Fatal(err)
	}

	words, err := e.Boxes.ReleaseWords(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(words, "amber-fox goes to the trash for 72 hours") || !strings.Contains(words, "On this host its folder and its snapshots stay on disk") {
		t.Errorf("the release dialog says %q", words)
	}

	op := release(t, e, snapshots.Owner(), b.Name)
	if got := boxState(t, e, b.Name); got != "trashed" {
		t.Fatalf("after the release the box is %s, want trashed", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "work.txt")); err != nil {
		t.Fatalf("the box's folder went with the release into the trash: %v", err)
	}
	st, err := e.Local.Status(ctx, providers.Guest{Ref: b.GuestRef})
	if err != nil || st.Running {
		t.Fatalf("a box in the trash is stopped: running %v, %v", st.Running, err)
	}
	entry, err := e.Boxes.TrashOf(ctx, snapshots.Owner(), b.Name)
	if err != nil {
		t.Fatal(err)
	}
	if entry.Final == nil || entry.FinalName != "at the release at "+op.CreatedAt.In(e.Core.TimeZone(ctx)).Format("15:04") {
		t.Fatalf("the trash's final snapshot is %v %q (%s)", entry.Final, entry.FinalName, entry.FinalWords)
	}
	if want := op.CreatedAt.Add(72 * time.Hour); !entry.Until.Equal(want) {
		t.Errorf("it stays in the trash until %v, want %v (72 hours)", entry.Until, want)
	}
	if !entry.WasRunning {
		t.Error("the trash does not remember the box ran")
	}
	list, err := e.Boxes.Trash(ctx, snapshots.Owner())
	if err != nil || len(list) != 1 || list[0].Box.ID != b.ID {
		t.Fatalf("the trash lists %v, %v", list, err)
	}
	// Nothing but a restore or the person's emptying acts on it.
	if _, err := e.Boxes.ReleaseBox(ctx, snapshots.Owner(), b.Name, ""); err == nil {
		t.Fatal("a box in the trash was released again")
	} else {
		coretest.RefusedWith(t, err, "amber-fox is in the trash already")
	}
	if _, _, err := e.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: b.Name, Name: "in the trash"}); err == nil {
		t.Fatal("a snapshot was taken of a box in the trash")
	}

	rop, err := e.Boxes.RestoreFromTrash(ctx, snapshots.Owner(), b.Name, "")
	if err != nil {
		t.Fatal(err)
	}
	if rop = e.Wait(t, rop); rop.State != snapshots.OpDone {
		t.Fatalf("restore from the trash ended %s: %s", rop.State, coretest.Deref(rop.Error))
	}
	if got := boxState(t, e, b.Name); got != "ready" {
		t.Fatalf("restored from the trash, the box is %s", got)
	}
	if st, err := e.Local.Status(ctx, providers.Guest{Ref: b.GuestRef}); err != nil || !st.Running {
		t.Errorf("a box that ran when released runs again when restored: %v %v", st.Running, err)
	}
	got := names(t, e, b.Name)
	if got[before.Name] == nil || got[entry.FinalName] == nil || len(got) != 2 {
		t.Fatalf("restored from the trash, its history is %v; want %q and %q", keys(got), before.Name, entry.FinalName)
	}
	if !got[entry.FinalName].Automatic || got[before.Name].Automatic {
		t.Errorf("restored from the trash, the final snapshot is automatic %v (want true), the person's %v (want false)",
			got[entry.FinalName].Automatic, got[before.Name].Automatic)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "work.txt")); string(data) != "tuesday" {
		t.Errorf("restored from the trash, work.txt holds %q", data)
	}
	// The final snapshot holds the box as it was released.
	restoreTo(t, e, snapshots.Owner(), b.Name, entry.FinalName)
	if data, _ := os.ReadFile(filepath.Join(dir, "work.txt")); string(data) != "tuesday" {
		t.Errorf("the final snapshot holds work.txt %q, want the box as released", data)
	}
	if list, _ := e.Boxes.Trash(ctx, snapshots.Owner()); len(list) != 0 {
		t.Errorf("the trash still lists %d boxes", len(list))
	}
	if _, err := e.Boxes.RestoreFromTrash(ctx, snapshots.Owner(), b.Name, ""); err == nil {
		t.Fatal("a box not in the trash was restored from it")
	} else {
		coretest.RefusedWith(t, err, "amber-fox is not in the trash.")
	}
}

// TestTrashEmptiesAfterWindow: the trash sweep leaves a box alone within
// its 72 hours and releases it after them, as a release did before the
// trash: its unkept snapshots and folder go, a kept snapshot stays. The
// person empties the trash at once; an agent never does.
func TestTrashEmptiesAfterWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := coretest.NewClock(time.Now())
	e := coretest.New(t, coretest.Options{Now: clk.Now})
	b := e.Box(t, snapshots.Owner(), "brisk-lake")
	dir := e.Local.BoxDir(providers.Guest{Ref: b.GuestRef})
	plain := e.TakeReady(t, snapshots.Owner(), b.Name, "plain")
	kept := e.TakeReady(t, snapshots.Owner(), b.Name, "kept one")
	kop, err := e.Keeps.Keep(ctx, snapshots.Owner(), snapshots.KeepRequest{Box: b.Name, Snapshot: kept.ID, Days: 30})
	if err != nil {
		t.Fatal(err)
	}
	if kop = e.Wait(t, kop); kop.State != snapshots.OpDone {
		t.Fatalf("keep ended %s: %s", kop.State, coretest.Deref(kop.Error))
	}
	release(t, e, snapshots.Owner(), b.Name)
	entry, err := e.Boxes.TrashOf(ctx, snapshots.Owner(), b.Name)
	if err != nil {
		t.Fatal(err)
	}

	clk.Advance(71*time.Hour + 59*time.Minute)
	ops, err := e.Sweeps.EmptyDueTrash(ctx)
	if err != nil || len(ops) != 0 {
		t.Fatalf("within its 72 hours the sweep released %d boxes (%v)", len(ops), err)
	}
	if got := boxState(t, e, b.Name); got != "trashed" {
		t.Fatalf("within its window the box is %s", got)
	}

	clk.Advance(2 * time.Minute)
	ops, err = e.Sweeps.EmptyDueTrash(ctx)
	if err != nil || len(ops) != 1 {
		t.Fatalf("after its 72 hours the sweep admitted %d releases (%v), want 1", len(ops), err)
	}
	if op := e.Wait(t, ops[0]); op.State != snapshots.OpDone {
		t.Fatalf("the sweep's release ended %s: %s", op.State, coretest.Deref(op.Error))
	}
	if ops, _ := e.Sweeps.EmptyDueTrash(ctx); len(ops) != 0 {
		t.Errorf("the sweep released the box again: %d", len(ops))
	}
	if got := boxState(t, e, b.Name); got != "released" {
		t.Fatalf("after the window the box is %s, want released", got)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the released box's folder is still there: %v", err)
	}
	for _, id := range []string{plain.ID, *entry.Final} {
		if got := e.StateOf(id); got != "gone" {
			t.Errorf("unkept snapshot %s is %s after the window, want gone", id, got)
		}
	}
	if got := e.StateOf(kept.ID); got != snapshots.StateReady {
		t.Errorf("the kept snapshot is %s after the window, want ready", got)
	}
	if list, _ := e.Boxes.Trash(ctx, snapshots.Owner()); len(list) != 0 {
		t.Errorf("the trash still lists %d boxes", len(list))
	}

	// The person empties the trash at once; an agent cannot.
	th, agent, _ := e.Thread(t, "tidy up")
	c := e.Box(t, agent, "calm-reef")
	release(t, e, agent, c.Name)
	if got := boxState(t, e, c.Name); got != "trashed" {
		t.Fatalf("an agent's release left its box %s, want trashed", got)
	}
	if _, err := e.Boxes.EmptyTrash(ctx, agent, c.Name, ""); err == nil {
		t.Fatal("an agent emptied the trash")
	} else {
		coretest.RefusedWith(t, err, "Only the person empties the trash.")
	}
	op, err := e.Boxes.EmptyTrash(ctx, snapshots.Owner(), c.Name, "")
	if err != nil {
		t.Fatal(err)
	}
	if op = e.Wait(t, op); op.State != snapshots.OpDone || boxState(t, e, c.Name) != "released" {
		t.Fatalf("emptying the trash of %s (thread %s) ended %s: %s", c.Name, th.Title, op.State, coretest.Deref(op.Error))
	}

	// With the trash off in Settings, a release deletes at once.
	st, err := e.Core.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st.TrashHours = 0
	if err := e.Core.SaveSettings(ctx, snapshots.Owner(), st); err != nil {
		t.Fatal(err)
	}
	d := e.Box(t, snapshots.Owner(), "dusky-dune")
	release(t, e, snapshots.Owner(), d.Name)
	if got := boxState(t, e, d.Name); got != "released" {
		t.Fatalf("with the trash off the box is %s, want released", got)
	}
	st.TrashHours = snapshots.MaxTrashHours + 1
	if err := e.Core.SaveSettings(ctx, snapshots.Owner(), st); err == nil {
		t.Fatal("a trash of 721 hours was saved")
	} else {
		coretest.RefusedWith(t, err, "A released box stays in the trash 0 to 720 hours.")
	}
}

// TestTrashOfAnotherThreadIsUnseen: an agent never sees another thread's
// trash, and cannot restore or empty a box there, by name or by ID; the
// words are those of a box that does not exist.
func TestTrashOfAnotherThreadIsUnseen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := coretest.New(t, coretest.Options{})
	_, mine, _ := e.Thread(t, "mine")
	_, other, _ := e.Thread(t, "other")
	b := e.Box(t, other, "grey-ridge")
	release(t, e, other, b.Name)

	if list, err := e.Boxes.Trash(ctx, mine); err != nil || len(list) != 0 {
		t.Fatalf("another thread's agent sees %d boxes in the trash (%v)", len(list), err)
	}
	if list, err := e.Boxes.Trash(ctx, other); err != nil || len(list) != 1 {
		t.Fatalf("the box's own agent sees %d boxes in the trash (%v)", len(list), err)
	}
	for _, ref := range []string{b.Name, b.ID} {
		if _, err := e.Boxes.TrashOf(ctx, mine, ref); err == nil {
			t.Fatalf("another thread read %s in the trash", ref)
		} else {
			coretest.RefusedWith(t, err, "No box "+ref+" that you can see.")
		}
		if _, err := e.Boxes.RestoreFromTrash(ctx, mine, ref, ""); err == nil {
			t.Fatalf("another thread restored %s from the trash", ref)
		} else {
			coretest.RefusedWith(t, err, "No box "+ref+" that you can see.")
		}
		if _, err := e.Restores.Resets().Reset(ctx, mine, restore.ResetRequest{Box: ref}); err == nil {
			t.Fatalf("another thread reset %s", ref)
		} else {
			coretest.RefusedWith(t, err, "No box "+ref+" that you can see.")
		}
	}
	// The box's own agent restores it from the trash.
	op, err := e.Boxes.RestoreFromTrash(ctx, other, b.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if op = e.Wait(t, op); op.State != snapshots.OpDone || boxState(t, e, b.Name) != "ready" {
		t.Fatalf("its own agent's restore from the trash ended %s: %s", op.State, coretest.Deref(op.Error))
	}
}
