package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// TestBrowserTrashAndReset drives the trash and Reset by keyboard alone in
// Debian's Chromium, against a real server and database: a release moves
// the box to the trash, the Trash tab restores it; Reset… with Keep logins
// makes brisk-lake fresh and keeps its login.
func TestBrowserTrashAndReset(t *testing.T) {
	br, err := Launch()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = br.Close() })

	t.Run("ReleaseToTrashAndRestore", func(t *testing.T) {
		t.Parallel()
		e := setup(t, br, 1440)
		e.gotoPage(t, "/boxes/dusky-dune")
		e.settled(t)
		e.tabTo(t, `.headacts a[href="/boxes/dusky-dune/release"]`)
		e.press(t, "Enter")
		e.waitText(t, "dialog[open] h2", "Release dusky-dune?")
		if d := e.text(t, "dialog[open]"); !strings.Contains(d, "dusky-dune goes to the trash for 72 hours") ||
			!strings.Contains(d, "On this host its folder and its snapshots stay on disk") {
			t.Fatalf("the release dialog does not say the trash and its cost:\n%s", d)
		}
		e.tabTo(t, "dialog[open] button[type=submit]")
		if f := e.focused(t); !strings.Contains(f, "Move dusky-dune to the trash") {
			t.Fatalf("the release button says %q", f)
		}
		e.press(t, "Enter")
		e.waitText(t, ".flash", "Moving dusky-dune to the trash")
		waitOp(t, e, "dusky-dune", snapshots.OpRelease)
		boxIs(t, e, "dusky-dune", "trashed")

		e.gotoPage(t, "/boxes/trash")
		e.waitText(t, "li.card", "dusky-dune")
		e.waitText(t, "li.card", "goes ")
		e.tabTo(t, "#restore-dusky-dune")
		e.press(t, "Enter")
		e.waitText(t, ".flash", "Restoring dusky-dune from the trash, with its history.")
		waitOp(t, e, "dusky-dune", snapshots.OpUntrash)
		boxIs(t, e, "dusky-dune", "ready")
		e.gotoPage(t, "/boxes/trash")
		e.waitText(t, "main", "The trash is empty.")
	})

	t.Run("ResetWithKeepLogins", func(t *testing.T) {
		t.Parallel()
		e := setup(t, br, 1440)
		if err := e.s.WriteFile(e.demo.BriskLake, ".codex/auth.json", `{"key":"codex"}`); err != nil {
			t.Fatal(err)
		}
		e.gotoPage(t, "/boxes/brisk-lake")
		e.settled(t)
		e.tabTo(t, "#reset")
		e.press(t, "Enter")
		e.waitText(t, "dialog[open] h2", "Reset brisk-lake to a fresh box?")
		if f := e.focused(t); !strings.Contains(f, "Cancel") {
			t.Fatalf("the reset dialog's focus starts on %s, want Cancel", f)
		}
		if d := e.text(t, "dialog[open]"); !strings.Contains(d, "boxsnap takes an undo of it first") || !strings.Contains(d, ".codex/auth.json") {
			t.Fatalf("the reset dialog says:\n%s", d)
		}
		e.tabTo(t, "#keep-logins")
		e.press(t, "Space")
		e.tabTo(t, "dialog[open] button[type=submit]")
		if f := e.focused(t); !strings.Contains(f, "Reset brisk-lake") {
			t.Fatalf("the reset button says %q", f)
		}
		e.press(t, "Enter")
		e.waitText(t, ".flash", "Resetting brisk-lake to a fresh box")
		waitOp(t, e, "brisk-lake", snapshots.OpReset)
		dir := e.s.Local.BoxDir(providers.Guest{Ref: e.demo.BriskLake.GuestRef})
		if _, err := os.Stat(filepath.Join(dir, "notes.txt")); !os.IsNotExist(err) {
			t.Fatalf("brisk-lake's notes.txt outlived its reset (%v)", err)
		}
		if data, err := os.ReadFile(filepath.Join(dir, ".codex/auth.json")); err != nil || string(data) != `{"key":"codex"}` {
			t.Fatalf("the kept login is %q (%v)", data, err)
		}
		// Undo… is on the box's page now, for the reset's undo.
		e.gotoPage(t, "/boxes/brisk-lake")
		e.settled(t)
		e.tabTo(t, "#undo")
		if f := e.focused(t); !strings.Contains(f, "Undo: restore ‘before the reset at") {
			t.Fatalf("the undo button's name is %q", f)
		}
	})
}

// boxIs checks the box is in state, as the core says.
func boxIs(t *testing.T, e *env, box, state string) {
	t.Helper()
	b, err := e.s.Core.Box(context.Background(), snapshots.Owner(), box)
	if err != nil || string(b.State) != state {
		t.Fatalf("%s is %v (%v), want %s", box, b, err, state)
	}
}

// waitOp waits until the box's newest operation of kind ends done.
func waitOp(t *testing.T, e *env, box, kind string) {
	t.Helper()
	var id string
	if err := e.s.Pool.QueryRow(context.Background(), `SELECT o.id FROM operations o JOIN boxes b ON b.id = o.box_id
		WHERE b.name = $1 AND o.kind = $2 ORDER BY o.seq DESC LIMIT 1`, box, kind).Scan(&id); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	op, err := e.s.Core.Wait(ctx, id)
	if err != nil || op.State != snapshots.OpDone {
		t.Fatalf("the %s of %s ended %v: %v", kind, box, op, err)
	}
}
