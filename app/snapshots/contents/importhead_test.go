package contents_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/providers"
)

// exportOf writes an export file of box's snapshots in e.
func exportOf(t *testing.T, e *coretest.Env, box string, snaps ...string) []byte {
	t.Helper()
	ctx := context.Background()
	ex, err := e.Contents.PlanExport(ctx, snapshots.Owner(), contents.ExportRequest{Box: box, Snapshots: snaps})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := ex.WriteTo(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// importInto imports one export file into e, as the person.
func importInto(t *testing.T, e *coretest.Env, file []byte) *contents.ImportResult {
	t.Helper()
	ctx := context.Background()
	st, err := e.Contents.Stage(ctx, "import.boxsnap", bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Remove()
	res, err := e.Contents.Import(ctx, snapshots.Owner(), []*contents.Staged{st})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// headOf is the name of box's head in e, or "" when it has none.
func headOf(t *testing.T, e *coretest.Env, box string) string {
	t.Helper()
	l, err := e.Heads.BoxLineage(context.Background(), snapshots.Owner(), box)
	if err != nil {
		t.Fatal(err)
	}
	if l.Head == nil {
		return ""
	}
	return l.Head.Name
}

// restoreTo restores box to the snapshot named name in e, and waits.
func restoreTo(t *testing.T, e *coretest.Env, box, name string) {
	t.Helper()
	sn := names(t, e, box)[name]
	op, err := e.Restores.Restore(context.Background(), snapshots.Owner(), snapshots.RestoreRequest{Box: box, Snapshot: sn.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("restore to %s: %s", name, coretest.Deref(got.Error))
	}
}

// TestImportAdvancesHead follows microsandbox's rules for an import into a
// box that is here: a known descendant of the head advances it; a sibling,
// or the head's own ancestor, keeps the head, and the import still
// succeeds.
func TestImportAdvancesHead(t *testing.T) {
	t.Parallel()
	from := coretest.New(t, coretest.Options{})
	to := coretest.New(t, coretest.Options{})
	box := from.Box(t, snapshots.Owner(), "amber-fox")
	file := filepath.Join(from.Local.BoxDir(providers.Guest{Ref: box.GuestRef}), "state.txt")

	write(t, file, "v1")
	from.TakeReady(t, snapshots.Owner(), "amber-fox", "cp01")
	importInto(t, to, exportOf(t, from, "amber-fox", "cp01"))
	if h := headOf(t, to, "amber-fox"); h != "cp01" {
		t.Fatalf("a box made by an import of cp01 has head %q, want cp01", h)
	}

	// cp02 was taken from cp01, the head here: the head advances.
	write(t, file, "v2")
	from.TakeReady(t, snapshots.Owner(), "amber-fox", "cp02")
	if res := importInto(t, to, exportOf(t, from, "amber-fox", "cp02")); res.Made {
		t.Fatal("the second import made the box again")
	}
	if h := headOf(t, to, "amber-fox"); h != "cp02" {
		t.Fatalf("after importing cp02, a descendant of the head, the head is %q, want cp02", h)
	}

	// experiment is a sibling of cp02, taken from cp01: the head stays.
	restoreTo(t, from, "amber-fox", "cp01")
	write(t, file, "v3")
	from.TakeReady(t, snapshots.Owner(), "amber-fox", "experiment")
	importInto(t, to, exportOf(t, from, "amber-fox", "experiment"))
	if h := headOf(t, to, "amber-fox"); h != "cp02" {
		t.Fatalf("after importing experiment, a sibling of the head, the head is %q, want cp02", h)
	}
	if _, ok := names(t, to, "amber-fox")["experiment"]; !ok {
		t.Fatal("the sibling was not imported")
	}

	// An older snapshot again: nothing new, the head stays.
	importInto(t, to, exportOf(t, from, "amber-fox", "cp01"))
	if h := headOf(t, to, "amber-fox"); h != "cp02" {
		t.Fatalf("importing cp01 again moved the head to %q", h)
	}
}

// TestCompetingTipsLeaveNoHead: a batch holding two siblings makes a box
// here with no head, whatever the order of the batch and whichever was
// taken last; choosing one is the person's, after which the next import of
// its descendant advances it.
func TestCompetingTipsLeaveNoHead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	from := coretest.New(t, coretest.Options{})
	to := coretest.New(t, coretest.Options{})
	box := from.Box(t, snapshots.Owner(), "amber-fox")
	file := filepath.Join(from.Local.BoxDir(providers.Guest{Ref: box.GuestRef}), "state.txt")

	write(t, file, "v1")
	from.TakeReady(t, snapshots.Owner(), "amber-fox", "cp01")
	write(t, file, "v2")
	from.TakeReady(t, snapshots.Owner(), "amber-fox", "cp02")
	restoreTo(t, from, "amber-fox", "cp01")
	write(t, file, "v3")
	from.TakeReady(t, snapshots.Owner(), "amber-fox", "experiment") // the newest

	res := importInto(t, to, exportOf(t, from, "amber-fox", "cp01", "cp02", "experiment"))
	if !res.Made || res.MadeFrom != "" {
		t.Fatalf("the import made %v from %q, want a new box made from no snapshot", res.Made, res.MadeFrom)
	}
	if h := headOf(t, to, "amber-fox"); h != "" {
		t.Fatalf("a batch with competing tips chose %q as the head, want none until someone chooses", h)
	}
	here := names(t, to, "amber-fox")
	for _, n := range []string{"cp01", "cp02", "experiment"} {
		if here[n] == nil {
			t.Fatalf("%s was not imported: %v", n, keys(here))
		}
	}

	// The person chooses cp02; then a descendant of it advances the head.
	if _, err := to.Heads.ChooseHead(ctx, snapshots.Owner(), "amber-fox", "cp02"); err != nil {
		t.Fatal(err)
	}
	restoreTo(t, from, "amber-fox", "cp02")
	write(t, file, "v4")
	from.TakeReady(t, snapshots.Owner(), "amber-fox", "cp03")
	importInto(t, to, exportOf(t, from, "amber-fox", "cp03"))
	if h := headOf(t, to, "amber-fox"); h != "cp03" {
		t.Fatalf("after choosing cp02 and importing cp03, its descendant, the head is %q, want cp03", h)
	}
}
