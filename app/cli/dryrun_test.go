package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/cli"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// TestCLIDryRun: --dry-run on every command that deletes or overwrites
// (snapshot delete, snapshot restore, box reset, box undo, box release,
// box trash-empty) prints the
// plan in the dialogs' words and changes nothing; where the real command
// refuses, the dry run refuses in the same words.
func TestCLIDryRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := setup(t)
	box := func(args ...string) (int, string, string) {
		t.Helper()
		var out, errw strings.Builder
		code := cli.RunBox(ctx, args, cli.Env{Getenv: func(k string) string { return g.env()[k] }}, &out, &errw)
		return code, out.String(), errw.String()
	}
	b, err := g.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "amber-fox", Backend: "local"})
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(g.Local.BoxDir(providers.Guest{Ref: b.GuestRef}), "work.txt")
	if err := os.WriteFile(work, []byte("before"), 0o600); err != nil {
		t.Fatal(err)
	}
	g.ok(t, "take", "amber-fox", "--name", "before")
	if err := os.WriteFile(work, []byte("after"), 0o600); err != nil {
		t.Fatal(err)
	}
	count := func() (n int) {
		t.Helper()
		if err := g.Pool.QueryRow(ctx, "SELECT (SELECT count(*) FROM operations) + (SELECT count(*) FROM box_log) + (SELECT count(*) FROM snapshots)").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	rows := count()

	says(t, g.ok(t, "delete", "amber-fox", "before", "--dry-run"), "Delete ‘before’? ", snapshots.NothingChangedDryWords)
	says(t, g.ok(t, "restore", "amber-fox", "before", "--dry-run"), "A restore of amber-fox to ‘before’ would first take an undo", snapshots.NothingChangedDryWords)
	code, out, errw := box("reset", "amber-fox", "--keep-logins", "--dry-run")
	if code != cli.ExitOK {
		t.Fatalf("box reset --dry-run: exit %d: %s%s", code, out, errw)
	}
	says(t, out, "amber-fox becomes a fresh copy of ", "Keep logins carries over, from each home folder: ", snapshots.NothingChangedDryWords)
	// No undo yet: the dry run refuses as the undo does.
	dryCode, _, dryErr := box("undo", "amber-fox", "--dry-run")
	realCode, _, realErr := box("undo", "amber-fox")
	if dryCode == cli.ExitOK || dryCode != realCode || dryErr != realErr {
		t.Fatalf("box undo --dry-run: exit %d %q; box undo: exit %d %q", dryCode, dryErr, realCode, realErr)
	}
	if n := count(); n != rows {
		t.Fatalf("the dry runs changed %d rows", n-rows)
	}
	if data, _ := os.ReadFile(work); string(data) != "after" {
		t.Fatalf("after the dry runs, work.txt holds %q", data)
	}

	// A release goes to the trash first; a box not in the trash cannot be
	// emptied from it, dry or not; once there, emptying it says it goes now.
	code, out, errw = box("release", "amber-fox", "--dry-run")
	if code != cli.ExitOK {
		t.Fatalf("box release --dry-run: exit %d: %s%s", code, out, errw)
	}
	says(t, out, "amber-fox goes to the trash for ", "After that, amber-fox and everything on it go. Its snapshot goes with it.", snapshots.NothingChangedDryWords)
	dryCode, _, dryErr = box("trash-empty", "amber-fox", "--dry-run")
	realCode, _, realErr = box("trash-empty", "amber-fox")
	if dryCode == cli.ExitOK || dryCode != realCode || dryErr != realErr {
		t.Fatalf("box trash-empty --dry-run: exit %d %q; box trash-empty: exit %d %q", dryCode, dryErr, realCode, realErr)
	}
	if n := count(); n != rows {
		t.Fatalf("the release's dry runs changed %d rows", n-rows)
	}
	if code, out, errw = box("release", "amber-fox"); code != cli.ExitOK {
		t.Fatalf("box release: exit %d: %s%s", code, out, errw)
	}
	rows = count()
	if code, out, errw = box("trash-empty", "amber-fox", "--dry-run"); code != cli.ExitOK {
		t.Fatalf("box trash-empty --dry-run: exit %d: %s%s", code, out, errw)
	}
	says(t, out, "amber-fox and everything on it go now, and cannot be restored. ", snapshots.NothingChangedDryWords)
	if n := count(); n != rows {
		t.Fatalf("trash-empty's dry run changed %d rows", n-rows)
	}
}
