package cli_test

import (
	"context"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/cli"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// TestCLIHosts: `boxsnap box hosts` lists this host with its box; `move`
// of a local box is refused with the core's words while its snapshots are
// on its host only, and `host-gone` and `takeover` of a host that never ran
// boxsnap here are refused in words.
func TestCLIHosts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := setup(t)
	box := func(args ...string) (string, int) {
		t.Helper()
		var out, errw strings.Builder
		code := cli.RunBox(ctx, args, cli.Env{Getenv: func(k string) string { return g.env()[k] }}, &out, &errw)
		return out.String() + errw.String(), code
	}
	if _, err := g.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "amber-fox", Backend: "local"}); err != nil {
		t.Fatal(err)
	}
	g.TakeReady(t, snapshots.Owner(), "amber-fox", "one")
	if _, err := g.Pool.Exec(ctx, "INSERT INTO hosts (name) VALUES ('host-b')"); err != nil {
		t.Fatal(err)
	}
	this := g.Hosts.This()

	out, code := box("hosts")
	if code != cli.ExitOK {
		t.Fatalf("box hosts: exit %d: %s", code, out)
	}
	says(t, out, this+" (this host): alive, 1 boxes", "host-b: alive, 0 boxes")

	out, code = box("move", "amber-fox", "host-b")
	if code != cli.ExitRefused {
		t.Fatalf("box move: exit %d: %s", code, out)
	}
	says(t, out, "amber-fox's snapshots are on host "+this+" only; set a content store to move boxes between hosts.")

	for _, args := range [][]string{{"host-gone", "host-z"}, {"takeover", "host-z"}} {
		out, code = box(args...)
		if code != cli.ExitRefused {
			t.Fatalf("box %s: exit %d: %s", strings.Join(args, " "), code, out)
		}
		says(t, out, "No host named host-z has run boxsnap here")
	}
	out, code = box("host-gone", "host-b")
	if code != cli.ExitRefused {
		t.Fatalf("box host-gone host-b: exit %d: %s", code, out)
	}
	says(t, out, "a host still seen alive keeps its boxes")
}
