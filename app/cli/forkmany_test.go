package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/boxsnap/boxsnap/app/cli"
	"github.com/boxsnap/boxsnap/providers"
)

// TestCLIForkMany: `snapshot fork --count 3 --name try` makes try-1, try-2
// and try-3 in the box's thread from the one snapshot, each with the
// snapshot's files, and prints each; a count over the setting is refused
// and makes nothing.
func TestCLIForkMany(t *testing.T) {
	t.Parallel()
	g := setup(t)
	ctx := context.Background()
	_, agent, _ := g.Thread(t, "Try three parsers")
	b := g.Box(t, agent, "amber-fox")
	dir := g.Local.BoxDir(providers.Guest{Ref: b.GuestRef})
	if err := os.WriteFile(filepath.Join(dir, "app.conf"), []byte("v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	g.ok(t, "take", "amber-fox", "--name", "v1")

	code, _, errw := g.run(t, g.env(), "fork", "amber-fox", "v1", "--count", "11")
	if code != cli.ExitRefused {
		t.Fatalf("fork --count 11: exit %d, %q", code, errw)
	}
	says(t, errw, "A fork makes 1 to 10 boxes in one call, not 11.")

	out := g.ok(t, "fork", "amber-fox", "v1", "--count", "3", "--name", "try")
	says(t, out, "Made try-1, try-2 and try-3, forked from amber-fox at ", "  try-2\tdone\top")
	for _, name := range []string{"try-1", "try-2", "try-3"} {
		f, err := g.Core.Box(ctx, agent, name)
		if err != nil {
			t.Fatalf("%s is not in the box's thread: %v", name, err)
		}
		if got, _ := os.ReadFile(filepath.Join(g.Local.BoxDir(providers.Guest{Ref: f.GuestRef}), "app.conf")); string(got) != "v1" {
			t.Fatalf("%s holds %q", name, got)
		}
	}
}
