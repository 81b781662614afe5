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

// TestCLITrashAndReset: `boxsnap box release`, `trash`, `trash-restore`,
// `reset --keep-logins`, `undo` and `trash-empty` on a local box, each with
// the core's words.
func TestCLITrashAndReset(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := setup(t)
	box := func(args ...string) string {
		t.Helper()
		var out, errw strings.Builder
		code := cli.RunBox(ctx, args, cli.Env{Getenv: func(k string) string { return g.env()[k] }}, &out, &errw)
		if code != cli.ExitOK {
			t.Fatalf("boxsnap box %s: exit %d: %s%s", strings.Join(args, " "), code, out.String(), errw.String())
		}
		return out.String()
	}
	b, err := g.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "amber-fox", Backend: "local"})
	if err != nil {
		t.Fatal(err)
	}
	dir := g.Local.BoxDir(providers.Guest{Ref: b.GuestRef})
	if err := os.MkdirAll(filepath.Join(dir, ".codex"), 0o700); err != nil {
		t.Fatal(err)
	}
	for rel, content := range map[string]string{"work.txt": "mine", ".codex/auth.json": "codex"} {
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	says(t, box("trash"), "The trash is empty.")
	says(t, box("release", "amber-fox"), "Moved amber-fox to the trash until ")
	says(t, box("trash"), "amber-fox", "at the release at ")
	says(t, box("trash-restore", "amber-fox"), "Restored amber-fox from the trash, with its history.")

	says(t, box("reset", "amber-fox", "--keep-logins"), "Reset amber-fox to a fresh box. Kept its logins: .codex/auth.json. Undo restores ‘before the reset at ")
	if _, err := os.Stat(filepath.Join(dir, "work.txt")); !os.IsNotExist(err) {
		t.Fatalf("work.txt outlived the reset: %v", err)
	}
	says(t, box("undo", "amber-fox"), "Restored amber-fox to ‘before the reset at ")
	if data, _ := os.ReadFile(filepath.Join(dir, "work.txt")); string(data) != "mine" {
		t.Fatalf("after undo, work.txt holds %q", data)
	}

	box("release", "amber-fox")
	says(t, box("trash-empty", "amber-fox"), "Released amber-fox.")
	says(t, box("trash"), "The trash is empty.")
}
