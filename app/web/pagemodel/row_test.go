package pagemodel

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
)

// failingTakes wraps a backend so a take fails while fail is set.
type failingTakes struct {
	providers.Backend
	fail atomic.Bool
}

func (f *failingTakes) Snapshot(ctx context.Context, g providers.Guest, tk providers.SnapshotTake, rec providers.Recorder) (providers.SnapshotTaken, error) {
	if f.fail.Load() {
		return providers.SnapshotTaken{}, errors.New("the test's take fails")
	}
	return f.Backend.Snapshot(ctx, g, tk, rec)
}

// TestRowOffersWhatItsStateAllows: a ready kept snapshot's row offers
// Restore and Fork, and its menu Rename…, Note…, Keep longer…, Stop keeping,
// Copy ID and Delete…, none disabled, Stop keeping and Delete… last, as they
// put the snapshot at risk; a failed take's row says "take failed" in red
// and offers Delete… alone, each other action disabled with why.
func TestRowOffersWhatItsStateAllows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var takes *failingTakes
	e := coretest.New(t, coretest.Options{Wrap: func(b snapshots.Backend) snapshots.Backend {
		takes = &failingTakes{Backend: b.Snap}
		b.Snap = takes
		return b
	}})
	owner := snapshots.Owner()
	b := e.Box(t, owner, "amber-fox")
	kept := e.TakeReady(t, owner, b.Name, "before the migration")
	op, err := e.Keeps.Keep(ctx, owner, snapshots.KeepRequest{Box: b.Name, Snapshot: kept.ID, Days: 30})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("keep ended %s: %s", got.State, coretest.Deref(got.Error))
	}
	takes.fail.Store(true)
	op, failed, err := e.Take.Take(ctx, owner, take.TakeRequest{Box: b.Name, Name: "broken"})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Wait(t, op); got.State != snapshots.OpFailed {
		t.Fatalf("the failing take ended %s", got.State)
	}

	rb, _ := NewBuilders(Parts{Core: e.Core, Keeps: e.Keeps, Boxes: e.Boxes, Contents: e.Contents, Heads: e.Heads, Tab: e.Tab,
		Approvals: e.Approvals, Restores: e.Restores, Forks: e.Forks, Logger: e.Logger})
	list, err := e.Core.List(ctx, owner, snapshots.ListQuery{Box: b.ID})
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %v, %d boxes", err, len(list))
	}
	rows := map[string]SnapRow{}
	for _, r := range rb.Group(list[0], list[0].Snapshots, rb.RowContext(ctx, "/boxes/amber-fox", false), "").Rows {
		rows[r.ID] = r
	}

	k, ok := rows[kept.ID]
	if !ok {
		t.Fatal("the kept snapshot has no row")
	}
	if k.Restore.Disabled() || k.Fork.Disabled() {
		t.Errorf("a ready kept snapshot's Restore (%q) or Fork (%q) is disabled", k.Restore.Why, k.Fork.Why)
	}
	if !k.Kept || !strings.Contains(k.Line, "kept until") {
		t.Errorf("a kept snapshot's row says %q, not kept until its day", k.Line)
	}
	var texts []string
	for _, m := range k.Menu {
		texts = append(texts, m.Text)
	}
	for _, want := range []string{"Rename…", "Note…", "Keep longer…", "Stop keeping", "Copy ID", "Delete…"} {
		i := indexOf(k.Menu, want)
		if i < 0 {
			t.Errorf("a ready kept snapshot's menu %q has no %s", texts, want)
			continue
		}
		if why := k.Menu[i].Why; why != "" {
			t.Errorf("a ready kept snapshot's %s is disabled: %s", want, why)
		}
	}
	if n := len(k.Menu); n < 2 || k.Menu[n-2].Text != "Stop keeping" || k.Menu[n-1].Text != "Delete…" {
		t.Errorf("the menu %q does not end with Stop keeping, Delete…", texts)
	}

	f, ok := rows[failed.ID]
	if !ok {
		t.Fatal("the failed take has no row")
	}
	if !strings.HasPrefix(f.Failure, "take failed") {
		t.Errorf("a failed take's row says %q in red, not take failed", f.Failure)
	}
	for name, a := range map[string]Action{"Restore": f.Restore, "Fork": f.Fork, "Rename": f.Rename, "Note": f.NoteA, "Keep": f.Keep} {
		if !a.Disabled() {
			t.Errorf("a failed take's %s is offered", name)
		}
	}
	if f.Delete.Disabled() {
		t.Errorf("a failed take's Delete is disabled: %s", f.Delete.Why)
	}
	for _, m := range f.Menu {
		if m.Why == "" && m.Text != "Delete…" && m.Copy == "" {
			t.Errorf("a failed take's menu offers %s", m.Text)
		}
	}
}

// indexOf is the place of the menu item that says text, or -1.
func indexOf(menu []MenuItem, text string) int {
	for i, m := range menu {
		if m.Text == text {
			return i
		}
	}
	return -1
}
