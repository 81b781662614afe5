package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/cli"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// TestCLIHead: `snapshot head <box>` says the box's head; with a snapshot
// it chooses it without a restore, and the box's files stay; a made-up
// snapshot is refused in words and changes nothing.
func TestCLIHead(t *testing.T) {
	t.Parallel()
	g := setup(t)
	b := g.Box(t, snapshots.Owner(), "amber-fox")
	file := filepath.Join(g.Local.BoxDir(providers.Guest{Ref: b.GuestRef}), "app.conf")
	says(t, g.ok(t, "head", "amber-fox"), "amber-fox has no head", "boxsnap snapshot head amber-fox <snapshot>")
	for _, v := range []string{"v1", "v2"} {
		if err := os.WriteFile(file, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
		g.ok(t, "take", "amber-fox", "--name", v)
	}
	says(t, g.ok(t, "head", "amber-fox"), "The head of amber-fox is ‘v2’ (")
	says(t, g.ok(t, "head", "amber-fox", "v1"), "‘v1’ is the head of amber-fox", "Nothing in the box changed.")
	says(t, g.ok(t, "head", "amber-fox"), "The head of amber-fox is ‘v1’ (")
	if got, _ := os.ReadFile(file); string(got) != "v2" {
		t.Fatalf("choosing the head changed the box's file to %q", got)
	}
	code, out, errw := g.run(t, g.env(), "head", "amber-fox", "no-such")
	if code == cli.ExitOK || !strings.Contains(errw, "no-such") {
		t.Fatalf("a made-up snapshot: exit %d: %s%s", code, out, errw)
	}
	says(t, g.ok(t, "head", "amber-fox"), "The head of amber-fox is ‘v1’ (")
}
