package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// TestBrowser drives Debian's Chromium through the pages and dialogs by
// keyboard alone, against a real server and database: one browser, one
// boxsnap and database per subtest.
func TestBrowser(t *testing.T) {
	br, err := Launch()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = br.Close() })

	t.Run("TakeRestoreAndUndo", func(t *testing.T) {
		t.Parallel()
		e := setup(t, br, 1440)
		e.gotoPage(t, "/boxes/brisk-lake")
		e.mark(t)
		// Take snapshot: focus starts on the name.
		e.tabTo(t, "#snapshots-card a.button")
		e.press(t, "Enter")
		e.waitText(t, "dialog[open] h2", "Take a snapshot of brisk-lake")
		if f := e.focused(t); !strings.Contains(f, "#dlg-name") {
			t.Fatalf("Take snapshot's focus starts on %s, want the name", f)
		}
		if d := e.text(t, "dialog[open]"); !strings.Contains(d, "No charge.") || !strings.Contains(d, "brisk-lake has") {
			t.Fatalf("the take dialog does not say the count and the price:\n%s", d)
		}
		e.typeText(t, "before the e2e change")
		e.press(t, "Enter")
		e.waitText(t, "#snapshots-card li.snap:not(.busy) .name", "before the e2e change")
		id := e.rowID(t, "before the e2e change")
		if err := e.s.WriteFile(e.demo.BriskLake, "notes.txt", "changed after the snapshot\n"); err != nil {
			t.Fatal(err)
		}
		// Restore, with its undo: focus starts on Cancel.
		e.mark(t)
		e.tabTo(t, "#snap-"+id+" a[data-dialog][href*=restore]")
		if f := e.focused(t); !strings.Contains(f, "Restore brisk-lake to before the e2e change") {
			t.Fatalf("the restore button's name is %q", f)
		}
		e.press(t, "Enter")
		e.waitText(t, "dialog[open] h2", "Restore brisk-lake to ‘before the e2e change’?")
		if f := e.focused(t); !strings.Contains(f, "Cancel") {
			t.Fatalf("the restore dialog's focus starts on %s, want Cancel", f)
		}
		d := e.text(t, "dialog[open]")
		for _, want := range []string{"Everything on its disk since then goes", "so you can undo this", "Named ‘before the restore at"} {
			if !strings.Contains(d, want) {
				t.Fatalf("the restore dialog does not say %q:\n%s", want, d)
			}
		}
		e.tabTo(t, "dialog[open] button[type=submit]")
		if f := e.focused(t); !strings.Contains(f, "Restore brisk-lake") || strings.Contains(f, "anyway") {
			t.Fatalf("with nothing more going, the button says %q", f)
		}
		e.press(t, "Enter")
		e.waitText(t, ".notice", "to ‘before the e2e change’")
		e.waitText(t, "#live", "restored")
		notice := e.text(t, ".notice")
		if !strings.Contains(notice, "by you") || !strings.Contains(notice, "Undo restores ‘before the restore at") {
			t.Fatalf("the restore's notice says %q", notice)
		}
		// Undo from the notice opens the same dialog for the undo.
		e.tabTo(t, ".notice a.button")
		e.press(t, "Enter")
		e.waitText(t, "dialog[open] h2", "Undo: put brisk-lake back to ‘before the restore at")
		e.tabTo(t, "dialog[open] button[type=submit]")
		e.mark(t)
		e.press(t, "Enter")
		e.waitText(t, ".notice", "to ‘before the restore at")
		e.noReload(t)
	})

	t.Run("KeepRenameNoteDelete", func(t *testing.T) {
		t.Parallel()
		e := setup(t, br, 1440)
		e.gotoPage(t, "/boxes/brisk-lake")
		id := e.rowID(t, "clean install")
		menu := "#snap-" + id + " summary"
		openItem := func(text string) {
			e.settled(t)
			e.tabTo(t, menu)
			e.press(t, "Enter")
			e.tabTo(t, "#snap-"+id+" .items a[aria-label^='"+text+"']")
			e.press(t, "Enter")
			e.shown(t)
		}
		// Escape closes a dialog opened from the menu and returns focus to
		// the menu's button.
		openItem("Rename")
		e.press(t, "Escape")
		e.closed(t)
		if f := e.focused(t); !strings.Contains(f, "More for clean install") {
			t.Fatalf("after Escape, focus is on %s, want the menu's button", f)
		}
		// Keep: the date, and what keeping costs.
		openItem("Keep")
		if d := e.text(t, "dialog[open]"); !strings.Contains(d, "after a release") || !strings.Contains(d, "No charge.") {
			t.Fatalf("the keep dialog does not say what keeping costs:\n%s", d)
		}
		e.tabTo(t, "dialog[open] button[type=submit]")
		e.press(t, "Enter")
		e.waitText(t, "#snap-"+id+" .line", "kept until")
		e.waitText(t, "#snap-"+id+" .badge", "Kept")
		// Rename.
		openItem("Rename")
		e.press(t, "Control+a")
		e.typeText(t, "golden image")
		e.press(t, "Enter")
		e.waitText(t, "#snap-"+id+" .name", "golden image")
		// Note.
		openItem("Note")
		e.press(t, "Control+a")
		e.typeText(t, "The base every test starts from.")
		e.tabTo(t, "dialog[open] button[type=submit]")
		e.press(t, "Enter")
		e.waitText(t, "#snap-"+id+" .note", "The base every test starts from.")
		if got := snapshotNamed(t, e.s, "brisk-lake", "golden image"); got.Note == nil || !got.Kept() {
			t.Fatalf("the record is not renamed, noted and kept: %+v", got)
		}
		// Delete the undo: it says it is one, focus starts on Cancel.
		undo := ""
		for _, sn := range mustList(t, e.s, "brisk-lake") {
			if sn.IsUndo() {
				undo = sn.ID
			}
		}
		menu = "#snap-" + undo + " summary"
		e.settled(t)
		e.tabTo(t, menu)
		e.press(t, "Enter")
		e.tabTo(t, "#snap-"+undo+" .items a[aria-label^='Delete']")
		e.press(t, "Enter")
		e.waitText(t, "dialog[open]", "It is the undo of the restore at")
		if f := e.focused(t); !strings.Contains(f, "Cancel") {
			t.Fatalf("the delete dialog's focus starts on %s, want Cancel", f)
		}
		e.tabTo(t, "dialog[open] button[type=submit]")
		e.press(t, "Enter")
		if err := e.page.Locator("#snap-" + undo).WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateDetached}); err != nil {
			t.Fatalf("the deleted undo's row stays: %v", err)
		}
	})

	t.Run("BulkDeleteSkipsARestoresTarget", func(t *testing.T) {
		t.Parallel()
		// The restore must still wait at its stop when the dialog opens:
		// under load the page took longer than the default 20 s stop.
		e := setupStack(t, br, 1440, false, StackOptions{StopTimeout: 10 * time.Minute})
		ctx := context.Background()
		slow, err := e.s.SlowBox(ctx, "hazel-heron")
		if err != nil {
			t.Fatal(err)
		}
		target, err := e.s.Take(ctx, snapshots.Owner(), slow.Name, "before the upgrade", "")
		if err != nil {
			t.Fatal(err)
		}
		other, err := e.s.Take(ctx, snapshots.Owner(), slow.Name, "scratch", "")
		if err != nil {
			t.Fatal(err)
		}
		// The restore waits at its stop: its target stays pinned.
		if _, err := e.s.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: slow.Name, Snapshot: target.ID}); err != nil {
			t.Fatal(err)
		}
		e.gotoPage(t, "/boxes/snapshots?q=hazel-heron&select=1")
		// Newest first: scratch's row comes before the target's.
		for _, id := range []string{other.ID, target.ID} {
			e.tabTo(t, "#snap-"+id+" input.pick")
			e.press(t, "Space")
		}
		e.tabTo(t, "#bulk button[value=delete]")
		e.press(t, "Enter")
		e.waitText(t, "dialog", "Skipped")
		d := e.text(t, "dialog")
		if !strings.Contains(d, "‘before the upgrade’ on hazel-heron: ‘before the upgrade’ is in use: the restore at") {
			t.Fatalf("the bulk dialog does not name the restore's target as skipped, and why:\n%s", d)
		}
		if !strings.Contains(d, "‘scratch’ on hazel-heron: frees") {
			t.Fatalf("the bulk dialog does not say what the rest frees:\n%s", d)
		}
		e.tabTo(t, "dialog button[type=submit]")
		e.press(t, "Enter")
		e.waitText(t, ".flash", "Deleting 1 snapshot. Skipped ‘before the upgrade’")
		if _, _, err := e.s.Core.Snapshot(ctx, snapshots.Owner(), target.ID); err != nil {
			t.Fatalf("the restore's target went: %v", err)
		}
	})

	t.Run("GuardedRestoreAndAStaleDialog", func(t *testing.T) {
		t.Parallel()
		e := setup(t, br, 1440)
		ctx := context.Background()
		// Threads' workspaces make amber-fox a box threads run on: its
		// restores are off unless Settings turns them on.
		st, err := e.s.Core.Settings(ctx)
		if err != nil {
			t.Fatal(err)
		}
		st.ExecutionMachineRestores = true
		if err := e.s.Core.SaveSettings(ctx, snapshots.Owner(), st); err != nil {
			t.Fatal(err)
		}
		presence := snapshots.Presence{Workspaces: []snapshots.Workspace{{Thread: e.demo.Thread.ID, Working: true}, {Thread: e.demo.Guide.ID}},
			Desktop: "you", Terminals: 1}
		if _, err := e.s.Boxes.SetPresence(ctx, snapshots.Owner(), "amber-fox", presence); err != nil {
			t.Fatal(err)
		}
		e.gotoPage(t, "/boxes/amber-fox")
		id := e.demo.Migration.ID
		e.tabTo(t, "#snap-"+id+" a[data-dialog][href*=restore]")
		e.press(t, "Enter")
		e.waitText(t, "dialog[open] h2", "Restore amber-fox to ‘before the migration’?")
		d := e.text(t, "dialog[open]")
		for _, want := range []string{"Also goes:", "Fix the sign-in flow is working on amber-fox", "Write the API guide is idle on amber-fox",
			"You have control of its desktop.", "A terminal is open on it."} {
			if !strings.Contains(d, want) {
				t.Fatalf("the restore dialog does not name %q:\n%s", want, d)
			}
		}
		e.tabTo(t, "dialog[open] button[type=submit]")
		if f := e.focused(t); !strings.Contains(f, "Restore amber-fox anyway") {
			t.Fatalf("a guarded restore's button says %q", f)
		}
		// The plan changes while the dialog is open: the terminal closes.
		presence.Terminals = 0
		if _, err := e.s.Boxes.SetPresence(ctx, snapshots.Owner(), "amber-fox", presence); err != nil {
			t.Fatal(err)
		}
		e.press(t, "Enter")
		e.waitText(t, "dialog[open] .error", "This changed since the dialog opened")
		if d := e.text(t, "dialog[open]"); strings.Contains(d, "A terminal is open") {
			t.Fatalf("the stale dialog still shows the old plan:\n%s", d)
		}
		if got := mustList(t, e.s, "amber-fox"); len(got) != 2 {
			t.Fatalf("a stale dialog acted: amber-fox has %d snapshots", len(got))
		}
		// A box threads run on is never restored without an undo: the
		// undo is ticked and locked, and the restore takes it.
		if d := e.text(t, "dialog[open]"); !strings.Contains(d, snapshots.AlwaysWithUndoWords("amber-fox")) {
			t.Fatalf("the restore dialog does not say the undo is locked:\n%s", d)
		}
		if off, err := e.page.Locator("dialog[open] input[name=undo][type=checkbox]").IsDisabled(); err != nil || !off {
			t.Fatalf("the undo of a box threads run on can be unticked (disabled %v, %v)", off, err)
		}
		e.tabTo(t, "dialog[open] button[type=submit]")
		e.press(t, "Space")
		e.waitText(t, ".notice", "to ‘before the migration’")
		undos := 0
		for _, sn := range mustList(t, e.s, "amber-fox") {
			if sn.IsUndo() {
				undos++
			}
		}
		if undos != 1 {
			t.Fatalf("the restore of a box threads run on took %d undos, want 1", undos)
		}
	})

	t.Run("WithoutJavaScript", func(t *testing.T) {
		t.Parallel()
		e := setup(t, br, 1440)
		bctx, err := br.Browser.NewContext(playwright.BrowserNewContextOptions{JavaScriptEnabled: playwright.Bool(false)})
		if err != nil {
			t.Fatal(err)
		}
		defer bctx.Close()
		page, err := bctx.NewPage()
		if err != nil {
			t.Fatal(err)
		}
		if err := SignIn(page, e.s.URL); err != nil {
			t.Fatal(err)
		}
		if _, err := page.Goto(e.s.URL + "/boxes/brisk-lake"); err != nil {
			t.Fatal(err)
		}
		if err := page.Locator("#snapshots-card a.button").Click(); err != nil {
			t.Fatal(err)
		}
		if err := page.Locator("#dlg-name").Fill("taken with a form"); err != nil {
			t.Fatal(err)
		}
		if err := page.Locator("dialog button[type=submit]").Click(); err != nil {
			t.Fatal(err)
		}
		if err := page.Locator("li.snap .name", playwright.PageLocatorOptions{HasText: "taken with a form"}).WaitFor(); err != nil {
			t.Fatalf("the form's take has no row: %v", err)
		}
	})

	t.Run("Accessibility", func(t *testing.T) {
		t.Parallel()
		e := setupWith(t, br, 1440, true)
		mig := e.demo.Migration.ID
		for _, p := range []string{"/boxes", "/boxes/threads", "/boxes/snapshots", "/boxes/snapshots?select=1", "/boxes/amber-fox",
			"/boxes/brisk-lake", "/boxes/dusky-dune", "/settings/snapshots", "/settings/snapshots/agents", "/settings/snapshots/paid", "/settings/tokens",
			"/boxes/amber-fox/take", "/boxes/amber-fox/snapshots/" + mig + "/restore", "/boxes/amber-fox/snapshots/" + mig + "/keep",
			"/boxes/amber-fox/snapshots/" + mig + "/delete", "/boxes/amber-fox/snapshots/" + mig + "/rename",
			"/boxes/amber-fox/snapshots/" + mig + "/note", "/boxes/amber-fox/snapshots/" + mig + "/fork"} {
			e.gotoPage(t, p)
			e.axe(t, p)
		}
		// A dialog open over the page.
		e.gotoPage(t, "/boxes/amber-fox")
		e.tabTo(t, "#snap-"+mig+" a[data-dialog][href*=restore]")
		e.press(t, "Enter")
		e.page.Locator("dialog[open]").WaitFor()
		e.axe(t, "the restore dialog over amber-fox's page")
		// Signed out.
		e.gotoPage(t, "/signin")
		e.axe(t, "/signin")
	})

	t.Run("SearchAndFiltersKeepTheirPlace", func(t *testing.T) {
		t.Parallel()
		e := setup(t, br, 1440)
		e.gotoPage(t, "/boxes/snapshots")
		e.mark(t)
		e.tabTo(t, "#q")
		e.typeText(t, "migration")
		// The results narrow as the owner types, with no reload, and the
		// address keeps the search.
		if err := e.page.Locator("#box-brisk-lake").WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateDetached}); err != nil {
			t.Fatalf("the search did not narrow the list: %v", err)
		}
		e.waitText(t, "#snapshot-results", "before the migration")
		e.noReload(t)
		if err := e.page.WaitForURL("**/boxes/snapshots?q=migration"); err != nil {
			t.Fatalf("the address does not keep the search: %s", e.page.URL())
		}
		// A reload keeps it.
		if _, err := e.page.Reload(); err != nil {
			t.Fatal(err)
		}
		if v, _ := e.page.Locator("#q").InputValue(); v != "migration" {
			t.Fatalf("after a reload the search box says %q", v)
		}
		if n, _ := e.page.Locator("section.group").Count(); n != 1 {
			t.Fatalf("after a reload %d boxes show, want amber-fox alone", n)
		}
		// A filter from the address, and the back button.
		e.gotoPage(t, "/boxes/snapshots?by=agents")
		if ok, _ := e.page.Locator("input[name=by][value=agents]").IsChecked(); !ok {
			t.Fatal("the Taken by: Agents filter is not shown as on")
		}
		if _, err := e.page.GoBack(); err != nil {
			t.Fatal(err)
		}
		if v, _ := e.page.Locator("#q").InputValue(); v != "migration" {
			t.Fatalf("after Back the search box says %q", v)
		}
	})

	t.Run("NarrowWindow", func(t *testing.T) {
		t.Parallel()
		e := setup(t, br, 390)
		e.gotoPage(t, "/boxes/amber-fox")
		id := e.demo.Migration.ID
		// At 390 px the actions always show, and Fork is in the menu.
		op, err := e.page.Locator("#snap-"+id+" .acts").Evaluate(`el => getComputedStyle(el).opacity`, nil)
		if err != nil || op != "1" {
			t.Fatalf("at 390 px the row's actions have opacity %v (%v)", op, err)
		}
		if v, _ := e.page.Locator("#snap-" + id + " .acts > .wide-only").IsVisible(); v {
			t.Fatal("at 390 px Fork still shows beside Restore")
		}
		// Fork from the menu, by keyboard, on a box's page.
		e.settled(t)
		e.tabTo(t, "#snap-"+id+" summary")
		e.press(t, "Enter")
		if v, _ := e.page.Locator("#snap-" + id + " .items .narrow-only").IsVisible(); !v {
			t.Fatal("at 390 px the menu has no Fork")
		}
		e.tabTo(t, "#snap-"+id+" .items a.narrow-only")
		e.press(t, "Enter")
		e.waitText(t, "dialog[open] h2", "Fork amber-fox from ‘before the migration’")
		e.shown(t)
		if f := e.focused(t); !strings.Contains(f, "#dlg-name") {
			t.Fatalf("Fork's focus starts on %s, want the name", f)
		}
		// Escape returns focus to the menu's button.
		e.press(t, "Escape")
		e.closed(t)
		if f := e.focused(t); !strings.Contains(f, "More for before the migration") {
			t.Fatalf("after Escape, focus is on %s, want the menu's button", f)
		}
		e.press(t, "Enter")
		e.tabTo(t, "#snap-"+id+" .items a.narrow-only")
		e.press(t, "Enter")
		e.waitText(t, "dialog[open] h2", "Fork amber-fox")
		e.typeText(t, "amber-narrow")
		// The radio group is one stop; the arrow moves to "As one of your
		// machines".
		e.tabTo(t, "dialog[open] input[name=where]")
		e.press(t, "ArrowDown")
		if ok, _ := e.page.Locator("dialog[open] input[value=machine]").IsChecked(); !ok {
			t.Fatal("the arrow did not choose As one of your machines")
		}
		e.press(t, "Enter")
		if err := e.page.WaitForURL("**/boxes/amber-narrow**"); err != nil {
			t.Fatalf("Fork did not open the new box's page: %s", e.page.URL())
		}
		e.waitText(t, ".facts", "Forked from amber-fox, ‘before the migration’")
		e.waitText(t, ".facts", "Your machine")
	})

	t.Run("ForkFromTheTab", func(t *testing.T) {
		t.Parallel()
		e := setup(t, br, 1440)
		e.gotoPage(t, "/boxes/snapshots")
		id := e.rowID(t, "clean install")
		e.tabTo(t, "#fork-"+id)
		if f := e.focused(t); !strings.Contains(f, "Fork brisk-lake from clean install") {
			t.Fatalf("the fork button's name is %q", f)
		}
		e.press(t, "Enter")
		e.waitText(t, "dialog[open] h2", "Fork brisk-lake from ‘clean install’")
		if f := e.focused(t); !strings.Contains(f, "#dlg-name") {
			t.Fatalf("Fork's focus starts on %s, want the name", f)
		}
		d := e.text(t, "dialog[open]")
		for _, want := range []string{"A new box with brisk-lake's files as they were at", "It gets its own identity and keys, and never acts as brisk-lake.",
			"It starts fresh: no apps are running.", "It goes: as one of your machines.", "Its size: as the snapshot"} {
			if !strings.Contains(d, want) {
				t.Fatalf("the fork dialog does not say %q:\n%s", want, d)
			}
		}
		// Left empty, the name is brisk-lake-fork.
		e.press(t, "Enter")
		if err := e.page.WaitForURL("**/boxes/brisk-lake-fork**"); err != nil {
			t.Fatalf("Fork did not open the new box's page: %s", e.page.URL())
		}
		e.waitText(t, ".facts", "Forked from brisk-lake, ‘clean install’")
		// The fork is a box of its own: a snapshot of it has its row there.
		e.tabTo(t, "#snapshots-card a.button")
		e.press(t, "Enter")
		e.waitText(t, "dialog[open] h2", "Take a snapshot of brisk-lake-fork")
		e.typeText(t, "the fork's first")
		e.press(t, "Enter")
		e.waitText(t, "#snapshots-card li.snap:not(.busy) .name", "the fork's first")
		if got := e.text(t, "#snapshots-card li.snap:not(.now) .line"); !strings.Contains(got, "by you") {
			t.Fatalf("the fork's row says %q", got)
		}
	})

	t.Run("SwitchesSaveAtOnce", func(t *testing.T) {
		t.Parallel()
		e := setup(t, br, 1440)
		e.gotoPage(t, "/settings/snapshots/pictures")
		before, err := e.s.Core.Settings(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		e.tabTo(t, "input[name=pictures]")
		e.press(t, "Space")
		want := "Saved: Keep a picture of the screen with each snapshot, off."
		if !before.Pictures {
			want = "Saved: Keep a picture of the screen with each snapshot, on."
		}
		e.waitText(t, "#switch-receipt", want)
		after, err := e.s.Core.Settings(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if after.Pictures == before.Pictures {
			t.Fatal("the pictures switch did not save")
		}
		if f := e.focused(t); !strings.Contains(f, "INPUT") {
			t.Fatalf("focus left the switch: %s", f)
		}
	})
}

func mustList(t *testing.T, s *Stack, box string) []*snapshots.Snapshot {
	t.Helper()
	list, err := s.Core.List(context.Background(), snapshots.Owner(), snapshots.ListQuery{Box: box})
	if err != nil {
		t.Fatal(err)
	}
	return list[0].Snapshots
}
