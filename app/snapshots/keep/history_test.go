package keep_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/keep"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
)

// historyBox makes the person's box and starts it, so its change journal
// runs, and answers a function that writes a file in it.
func historyBox(t *testing.T, e *coretest.Env, name string) (*snapshots.Box, func(file, text string)) {
	t.Helper()
	b := e.Box(t, snapshots.Owner(), name)
	g := providers.Guest{Backend: "local", Kind: b.Kind, Ref: b.GuestRef}
	if err := e.Local.Start(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	dir := e.Local.BoxDir(g)
	return b, func(file, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// automaticOf lists a box's automatic snapshots.
func automaticOf(t *testing.T, e *coretest.Env, box string) []*snapshots.Snapshot {
	t.Helper()
	yes := true
	list, err := e.Core.List(context.Background(), snapshots.Owner(), snapshots.ListQuery{Box: box, Automatic: &yes})
	if err != nil {
		t.Fatal(err)
	}
	return list[0].Snapshots
}

// TestDeleteHistoryNeedsName: Delete history is refused, changing nothing,
// unless the box's name is typed, and to an agent; with it, every automatic
// snapshot goes and saved and kept ones stay.
func TestDeleteHistoryNeedsName(t *testing.T) {
	t.Parallel()
	e := coretest.New(t, coretest.Options{})
	ctx := context.Background()
	owner := snapshots.Owner()
	b, write := historyBox(t, e, "amber-fox")
	// Three in a row, more than the check takes in a cadence: admitted as
	// the check admits one.
	var ids []string
	for _, text := range []string{"one", "two", "three"} {
		write("notes.txt", text)
		op, sn, err := e.Take.TakeAutomatic(ctx, b.ID, "the box changed")
		if err != nil {
			t.Fatalf("change %s: %v", text, err)
		}
		if got := e.Wait(t, op); got.State != snapshots.OpDone {
			t.Fatalf("automatic take %s: %s", got.State, coretest.Deref(got.Error))
		}
		ids = append(ids, sn.ID)
	}
	if _, err := e.Keeps.Save(ctx, owner, b.Name, ids[0], "worth keeping"); err != nil {
		t.Fatal(err)
	}
	pop, _, err := e.Take.Take(ctx, owner, taking.TakeRequest{Box: b.Name, Name: "the person's"})
	if err != nil {
		t.Fatal(err)
	}
	e.Wait(t, pop)

	for _, typed := range []string{"", "amber", "Amber-Fox", "amber-fox "} {
		_, err := e.Keeps.DeleteHistory(ctx, owner, b.Name, typed, "")
		var r *snapshots.Refusal
		if !errors.As(err, &r) || r.Words != keep.DeleteHistoryWords("amber-fox") {
			t.Fatalf("Delete history with %q typed: %v, want %q", typed, err, keep.DeleteHistoryWords("amber-fox"))
		}
	}
	if _, err := e.Keeps.DeleteHistory(ctx, snapshots.Agent("thabc"), b.Name, "amber-fox", ""); err == nil {
		t.Fatal("an agent deleted a box's history")
	}
	if n := len(automaticOf(t, e, b.Name)); n != 2 {
		t.Fatalf("after refusals %d automatic snapshots, want the 2 still there", n)
	}
	op, err := e.Keeps.DeleteHistory(ctx, owner, b.Name, "amber-fox", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("delete history: %s", coretest.Deref(got.Error))
	}
	if n := len(automaticOf(t, e, b.Name)); n != 0 {
		t.Fatalf("after Delete history %d automatic snapshots remain", n)
	}
	list, err := e.Core.List(ctx, owner, snapshots.ListQuery{Box: b.Name})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, sn := range list[0].Snapshots {
		names = append(names, sn.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"the person's", "worth keeping"}) {
		t.Fatalf("after Delete history the box holds %v, want the saved ones", names)
	}
}
