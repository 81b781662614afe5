package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/boxsnap/boxsnap/app/cli"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// TestCLIExportImportShare moves a snapshot between two servers with the
// CLI: export to a file, import it on the other; then a share code made on
// one and redeemed on the other with --from, its planted key left behind.
func TestCLIExportImportShare(t *testing.T) {
	t.Parallel()
	a, b := setup(t), setup(t)
	box := a.Box(t, snapshots.Owner(), "amber-fox")
	dir := a.Local.BoxDir(providers.Guest{Ref: box.GuestRef})
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("one"), 0o644)
	os.MkdirAll(filepath.Join(dir, ".ssh"), 0o700)
	os.WriteFile(filepath.Join(dir, ".ssh", "id_ed25519"), []byte("PLANTED"), 0o600)
	a.ok(t, "take", "amber-fox", "--name", "first")

	file := filepath.Join(t.TempDir(), "amber.boxsnap")
	says(t, a.ok(t, "export", "amber-fox", "first", "-o", file), "Wrote "+file, "1 snapshot(s) of amber-fox")
	says(t, b.ok(t, "import", file), "Imported 1 snapshot into amber-fox.", "amber-fox is a new box here, made from ‘first’.")
	says(t, b.ok(t, "import", file), "Nothing new: amber-fox holds this snapshot already.")

	// A refusal names the file and what is wrong, exit 1.
	bad := filepath.Join(t.TempDir(), "bad.boxsnap")
	os.WriteFile(bad, []byte("not an export"), 0o644)
	code, _, errw := b.run(t, b.env(), "import", bad)
	if code != cli.ExitRefused {
		t.Fatalf("exit %d", code)
	}
	says(t, errw, "bad.boxsnap: ", "Nothing was imported.")
	code, _, errw = a.run(t, a.env(), "export", "amber-fox", "first")
	if code != cli.ExitRefused {
		t.Fatalf("export without -o: exit %d", code)
	}
	says(t, errw, "-o FILE")

	out := a.ok(t, "share", "amber-fox", "first", "--days", "2")
	shareCode := regexp.MustCompile(`bxs_[A-Za-z0-9_-]{43}`).FindString(out)
	if shareCode == "" {
		t.Fatalf("no code in %q", out)
	}
	says(t, out, "it is shown only now", ".ssh")
	says(t, b.ok(t, "redeem", shareCode, "--from", a.url), "amber-fox-shared is a new box here, made from ‘first’.")
	nb, err := b.Core.Box(t.Context(), snapshots.Owner(), "amber-fox-shared")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(b.Local.BoxDir(providers.Guest{Ref: nb.GuestRef}), ".ssh")); !os.IsNotExist(err) {
		t.Fatalf("the redeemed box has .ssh: %v", err)
	}
	listed := a.ok(t, "shares")
	says(t, listed, "LEAVES OUT", ".ssh")
	id := regexp.MustCompile(`\bsh[a-z0-9]{12}\b`).FindString(listed)
	says(t, a.ok(t, "unshare", id), "Revoked "+id)
	code, _, errw = b.run(t, b.env(), "redeem", shareCode, "--from", a.url)
	if code != cli.ExitRefused {
		t.Fatalf("a revoked code: exit %d", code)
	}
	// The other boxsnap's refusal in this one's words, never its own.
	says(t, errw, "has no live share code like that: it is wrong, revoked or expired. Nothing was imported.")
}
