package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/cli"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/keep"
	"github.com/boxsnap/boxsnap/providers"
)

// TestCLIHistory: list --automatic lists the automatic snapshots the check
// took, labelled; save and unsave turn one into an ordinary snapshot and
// back; history turns them off for a box; delete-history refuses without
// the box's name typed, and with it deletes the automatic ones only.
func TestCLIHistory(t *testing.T) {
	t.Parallel()
	g := setup(t)
	ctx := context.Background()
	b := g.Box(t, snapshots.Owner(), "amber-fox")
	guest := providers.Guest{Backend: "local", Kind: b.Kind, Ref: b.GuestRef}
	if err := g.Local.Start(ctx, guest); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"v1", "v2"} {
		if err := os.WriteFile(filepath.Join(g.Local.BoxDir(guest), "app.conf"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if text == "v1" {
			rep, err := g.Sweeps.CheckAutomatic(ctx)
			if err != nil || len(rep.Ops) != 1 {
				t.Fatalf("automatic check: %+v %v", rep, err)
			}
			g.Wait(t, &snapshots.Operation{ID: rep.Ops[0]})
			continue
		}
		// The check takes the next one a cadence later: admitted as it
		// admits one.
		op, _, err := g.Take.TakeAutomatic(ctx, b.ID, "the box changed")
		if err != nil {
			t.Fatal(err)
		}
		g.Wait(t, op)
	}
	out := g.ok(t, "list", "amber-fox", "--automatic")
	says(t, out, "amber-fox: 0 of 5 for this box", "(automatic)", "by boxsnap")
	first := snapshotID.FindString(out)
	if n := strings.Count(out, "(automatic)"); n != 2 {
		t.Fatalf("list --automatic shows %d automatic rows, want 2:\n%s", n, out)
	}
	says(t, g.ok(t, "save", "amber-fox", first, "--name", "good config"), "Saved ‘good config’ (", "never thinned")
	says(t, g.ok(t, "list", "amber-fox", "--saved"), "good config", "1 of 5 for this box")
	says(t, g.ok(t, "unsave", "amber-fox", "good config"), "‘good config’ (", "is automatic again")
	says(t, g.ok(t, "save", "amber-fox", "good config"), "Saved ‘good config’")

	says(t, g.ok(t, "history", "amber-fox"), "amber-fox: automatic snapshots on, checked every 15 s while it runs (the backend's setting); 1 held; the oldest goes past 100 GiB held.")
	says(t, g.ok(t, "history", "amber-fox", "--automatic", "off", "--max-gib", "20"), "automatic snapshots off (this box's own setting); 1 held; the oldest goes past 20 GiB held.")

	code, _, errw := g.run(t, g.env(), "delete-history", "amber-fox", "--confirm", "amber")
	if code != cli.ExitRefused || !strings.Contains(errw, keep.DeleteHistoryWords("amber-fox")) {
		t.Fatalf("delete-history with the wrong name: exit %d, %q", code, errw)
	}
	g.ok(t, "delete-history", "amber-fox", "--confirm", "amber-fox")
	out = g.ok(t, "list", "amber-fox")
	if strings.Contains(out, "(automatic)") || !strings.Contains(out, "good config") {
		t.Fatalf("after delete-history the box lists:\n%s", out)
	}
	says(t, g.ok(t, "delete-history", "amber-fox", "--confirm", "amber-fox"), "amber-fox has no automatic snapshots to delete.")
}
