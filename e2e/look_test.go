package e2e

import (
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// TestLookInside drives Browse files and Compare by keyboard alone in
// Debian's Chromium: from a row's menu into a snapshot's tree, a file's
// text and its download; from the restore dialog's "since then" to the list
// of changes, a file's diff, and a comparison with another snapshot.
func TestLookInside(t *testing.T) {
	br, err := Launch()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = br.Close() })

	t.Run("BrowseByKeyboard", func(t *testing.T) {
		t.Parallel()
		e := setup(t, br, 1440)
		mig := e.demo.Migration.ID
		e.gotoPage(t, "/boxes/amber-fox")
		e.settled(t)
		e.tabTo(t, "#snap-"+mig+" summary")
		e.press(t, "Enter")
		e.tabTo(t, "#snap-"+mig+" .items a[href$='/files']")
		if f := e.focused(t); !strings.Contains(f, "Browse files of before the migration") {
			t.Fatalf("the menu item's name is %q", f)
		}
		e.press(t, "Enter")
		e.waitText(t, "h1", "Browse ‘before the migration’ of amber-fox")
		e.tabTo(t, "table.files a[href$='files?path=app']")
		e.press(t, "Enter")
		e.waitText(t, "nav.path", "app")
		rows := e.text(t, "table.files tbody")
		if strings.Index(rows, "db/") < 0 || strings.Index(rows, "db/") > strings.Index(rows, "README.md") {
			t.Fatalf("the folder lists folders first:\n%s", rows)
		}
		e.tabTo(t, "table.files a[href$='file?path=app%2FREADME.md']")
		e.press(t, "Enter")
		e.waitText(t, "pre.text", "# amber-fox")
		e.tabTo(t, "#download-file")
		dl, err := e.page.ExpectDownload(func() error { return e.page.Keyboard().Press("Enter") })
		if err != nil {
			t.Fatal(err)
		}
		if dl.SuggestedFilename() != "README.md" {
			t.Fatalf("the download is named %q", dl.SuggestedFilename())
		}
		// A path that climbs out is refused in words.
		e.gotoPage(t, "/boxes/amber-fox/snapshots/"+mig+"/file?path=..%2F..%2Fetc%2Fpasswd")
		e.waitText(t, "main", `The path "../../etc/passwd" climbs out of the snapshot with ..`)
		// The download is in the box log, by you.
		evs, err := e.s.Boxes.BoxLog(t.Context(), snapshots.Owner(), "amber-fox", 5)
		if err != nil || len(evs) == 0 || evs[0].Kind != "downloaded" || evs[0].ActorKind != "owner" {
			t.Fatalf("the box log's newest event is %+v, %v", evs, err)
		}
	})

	t.Run("CompareByKeyboard", func(t *testing.T) {
		t.Parallel()
		e := setup(t, br, 1440)
		mig := e.demo.Migration.ID
		if err := e.s.WriteFile(e.demo.AmberFox, "app/db/schema.sql", "create table users (id int, email text);\n"); err != nil {
			t.Fatal(err)
		}
		if err := e.s.WriteFile(e.demo.AmberFox, "app/notes.txt", "new\n"); err != nil {
			t.Fatal(err)
		}
		e.gotoPage(t, "/boxes/amber-fox")
		e.tabTo(t, "#snap-"+mig+" a[data-dialog][href*=restore]")
		e.press(t, "Enter")
		e.waitText(t, "dialog[open] .changes", "1 file changed, 1 added, 0 removed since then")
		e.tabTo(t, "#restore-changes")
		e.press(t, "Enter")
		e.waitText(t, "#compare-words", "1 file changed, 1 added, 0 removed since then.")
		list := e.text(t, "table.changes tbody")
		if !strings.Contains(list, "changed app/db/schema.sql\t29 bytes → 41 bytes") || !strings.Contains(list, "added app/notes.txt\t— → 4 bytes") {
			t.Fatalf("the list says:\n%s", list)
		}
		e.tabTo(t, "table.changes a[href*='diff?path=app%2Fdb%2Fschema.sql']")
		e.press(t, "Enter")
		e.waitText(t, "pre.diff", "+create table users (id int, email text);")
		if d := e.text(t, "pre.diff"); !strings.Contains(d, "-create table users (id int);") {
			t.Fatalf("the diff says:\n%s", d)
		}
		e.tabTo(t, "#back-to-list")
		e.press(t, "Enter")
		e.waitText(t, "#compare-words", "since then")
		// Against the snapshot before it: what the migration's snapshot
		// holds that the older one does not.
		e.tabTo(t, "#against")
		e.press(t, "ArrowDown")
		e.tabTo(t, "form.against button[type=submit]")
		e.press(t, "Enter")
		e.waitText(t, "#compare-words", "0 files changed, 0 added, 2 removed in ‘Thu 09:15’.")
	})
}
