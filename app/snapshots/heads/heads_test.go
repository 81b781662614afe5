package heads_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
)

// TestHeadMovesForwardOnly follows microsandbox's rule: a snapshot records
// what it was taken from (the box's head), the head moves forward by itself
// on a take, and moves back only by a restore, after which the next take is
// taken from the snapshot restored to.
func TestHeadMovesForwardOnly(t *testing.T) {
	t.Parallel()
	e := coretest.New(t, coretest.Options{})
	ctx := context.Background()
	owner := snapshots.Owner()
	b := e.Box(t, owner, "cedar-owl")
	dir := e.Local.BoxDir(providers.Guest{Ref: b.GuestRef})
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	take := func(name string) *snapshots.Snapshot {
		t.Helper()
		op, sn, err := e.Take.Take(ctx, owner, taking.TakeRequest{Box: b.Name, Name: name})
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Wait(t, op); got.State != snapshots.OpDone {
			t.Fatalf("take %s: %s %s", name, got.State, coretest.Deref(got.Error))
		}
		sn, _, err = e.Core.Snapshot(ctx, owner, sn.ID)
		if err != nil {
			t.Fatal(err)
		}
		return sn
	}
	head := func() string {
		t.Helper()
		l, err := e.Heads.BoxLineage(ctx, owner, b.Name)
		if err != nil {
			t.Fatal(err)
		}
		if l.Head == nil {
			return ""
		}
		return l.Head.ID
	}
	parent := func(sn *snapshots.Snapshot) string {
		if sn.ParentID == nil {
			return ""
		}
		return *sn.ParentID
	}

	if h := head(); h != "" {
		t.Fatalf("a new box has head %s, want none", h)
	}
	write("one")
	a := take("cp01")
	if parent(a) != "" || head() != a.ID {
		t.Fatalf("first take: parent %q head %q, want no parent and head %s", parent(a), head(), a.ID)
	}
	write("two")
	bb := take("cp02")
	if parent(bb) != a.ID || head() != bb.ID {
		t.Fatalf("second take: parent %q head %q, want parent %s and head %s", parent(bb), head(), a.ID, bb.ID)
	}

	// A restore to cp01 moves the head back; the undo it takes first is
	// taken from cp02.
	op, err := e.Restores.Restore(ctx, owner, snapshots.RestoreRequest{Box: b.Name, Snapshot: a.ID})
	if err != nil {
		t.Fatal(err)
	}
	op = e.Wait(t, op)
	if op.State != snapshots.OpDone || op.UndoID == nil {
		t.Fatalf("restore %s: %s", op.State, coretest.Deref(op.Error))
	}
	undo, _, err := e.Core.Snapshot(ctx, owner, *op.UndoID)
	if err != nil {
		t.Fatal(err)
	}
	if parent(undo) != bb.ID {
		t.Fatalf("the undo was taken from %q, want cp02 %s", parent(undo), bb.ID)
	}
	if head() != a.ID {
		t.Fatalf("after the restore to cp01 the head is %q, want %s", head(), a.ID)
	}

	// The next take is a sibling of cp02, taken from cp01: the head moves
	// forward to it, never back to cp02 by itself.
	write("three")
	c := take("experiment")
	if parent(c) != a.ID || head() != c.ID {
		t.Fatalf("take after restore: parent %q head %q, want parent %s and head %s", parent(c), head(), a.ID, c.ID)
	}

	// The API's lineage: experiment, then cp01.
	l, err := e.Heads.SnapshotLineage(ctx, owner, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Chain) != 2 || l.Chain[0].Name != "experiment" || l.Chain[1].Name != "cp01" || l.Missing {
		t.Fatalf("lineage %+v, want experiment then cp01", l)
	}

	// Deleting cp02 (not the head) leaves the head alone.
	dop, err := e.Keeps.Delete(ctx, owner, snapshots.DeleteRequest{Box: b.Name, Snapshot: bb.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Wait(t, dop); got.State != snapshots.OpDone {
		t.Fatalf("delete: %s", coretest.Deref(got.Error))
	}
	if head() != c.ID {
		t.Fatalf("a delete moved the head to %q", head())
	}
	// The undo's ancestry now ends at a record that is gone, and says so.
	if l, err := e.Heads.SnapshotLineage(ctx, owner, undo.ID); err != nil || !l.Missing || len(l.Chain) != 1 {
		t.Fatalf("the undo's lineage %+v %v, want itself and a missing parent", l, err)
	}
}
