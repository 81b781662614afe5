package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/snapshots/keep"
)

// TestBrowserHistory: the box page's timeline of automatic snapshots, by
// keyboard alone. Its rows are labelled Automatic, grouped under the day
// and the hour, apart from the Snapshots card; Save (from a row's menu,
// with a name) moves one to the Snapshots card as an ordinary snapshot;
// Restore… from the timeline is the usual dialog, with its undo; Delete
// history refuses until the box's name is typed, then deletes the
// automatic ones and leaves the saved one.
func TestBrowserHistory(t *testing.T) {
	br, err := Launch()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = br.Close() })
	e := setup(t, br, 1440)
	ctx := context.Background()
	box := e.demo.BriskLake
	var ids []string
	for _, text := range []string{"one", "two", "three"} {
		if err := e.s.WriteFile(box, "session.log", text+"\n"); err != nil {
			t.Fatal(err)
		}
		op, sn, err := e.s.Taker.TakeAutomatic(ctx, box.ID, "the box changed")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.Wait(ctx, op); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sn.ID)
	}
	e.gotoPage(t, "/boxes/brisk-lake")
	e.settled(t)
	e.waitText(t, "#timeline .chead", "3 automatic snapshots")
	e.waitText(t, "#timeline h3.tlday", "Today")
	for _, id := range ids {
		e.waitText(t, "#timeline #snap-"+id+" .badge", "Automatic")
		if n, _ := e.page.Locator("#snapshots-card #snap-" + id).Count(); n != 0 {
			t.Fatalf("automatic snapshot %s is on the Snapshots card too", id)
		}
	}
	if hours, _ := e.page.Locator("#timeline h4.tlhour").Count(); hours < 1 {
		t.Fatal("the timeline has no hour headings")
	}
	// The newest first.
	first, _ := e.page.Locator("#timeline li.snap").First().GetAttribute("id")
	if first != "snap-"+ids[2] {
		t.Fatalf("the timeline's first row is %s, want the newest, snap-%s", first, ids[2])
	}

	// Save by keyboard: the row's menu, Save…, a name, Enter.
	e.tabTo(t, "#snap-"+ids[1]+" summary")
	e.press(t, "Enter")
	e.tabTo(t, "#snap-"+ids[1]+" .items a[aria-label^='Save']")
	e.press(t, "Enter")
	e.shown(t)
	if f := e.focused(t); !strings.Contains(f, "#dlg-name") {
		t.Fatalf("Save's focus starts on %s, want the name", f)
	}
	e.typeText(t, "worth keeping")
	e.press(t, "Enter")
	e.waitText(t, "#snapshots-card .name", "worth keeping")
	e.waitText(t, "#timeline .chead", "2 automatic snapshots")
	if got := snapshotNamed(t, e.s, "brisk-lake", "worth keeping"); got.Automatic || got.ID != ids[1] {
		t.Fatalf("after Save the record is %+v, want %s saved", got, ids[1])
	}

	// Restore from a point of the timeline: the usual dialog and its undo.
	e.settled(t)
	e.tabTo(t, "#restore-"+ids[0])
	e.press(t, "Enter")
	e.shown(t)
	e.waitText(t, "dialog[open]", "Restore")
	e.tabTo(t, "dialog[open] button[type=submit]")
	e.press(t, "Enter")
	e.waitText(t, ".notice", "Restored at")
	e.waitText(t, ".notice", "Undo restores")

	// Delete history: refused until the box's name is typed.
	e.gotoPage(t, "/boxes/brisk-lake")
	e.settled(t)
	e.tabTo(t, "#delete-history")
	e.press(t, "Enter")
	e.shown(t)
	e.tabTo(t, "#dlg-confirm")
	e.typeText(t, "brisk")
	e.press(t, "Enter")
	e.waitText(t, "dialog[open] .error", keep.DeleteHistoryWords("brisk-lake"))
	e.tabTo(t, "#dlg-confirm")
	e.press(t, "Control+a")
	e.typeText(t, "brisk-lake")
	e.press(t, "Enter")
	e.waitText(t, "#timeline", "No automatic snapshots of brisk-lake yet")
	e.waitText(t, "#snapshots-card .name", "worth keeping")
	for _, sn := range mustList(t, e.s, "brisk-lake") {
		if sn.Automatic {
			t.Fatalf("after Delete history %s (%s) is still there", sn.Name, sn.ID)
		}
	}
}
