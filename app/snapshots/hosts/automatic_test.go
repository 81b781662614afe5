package hosts_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/jobs"
	"github.com/boxsnap/boxsnap/providers"
)

// TestAutomaticHistoryOnEveryHost: a running, changed box on each of two
// hosts gets an automatic snapshot from one run of the automatic job,
// whichever process runs it: each host checks the boxes it owns, and only
// those.
func TestAutomaticHistoryOnEveryHost(t *testing.T) {
	ctx := context.Background()
	a, b := twoHosts(t, coretest.Options{})
	running := func(e *coretest.Env, name string) *snapshots.Box {
		t.Helper()
		box := e.Box(t, snapshots.Owner(), name)
		g := providers.Guest{Backend: "local", Kind: box.Kind, Ref: box.GuestRef}
		if err := e.Local.Start(ctx, g); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Local.Stop(context.Background(), g) })
		if err := os.WriteFile(filepath.Join(e.Local.BoxDir(g), "notes.txt"), []byte("changed on "+e.Hosts.This()), 0o644); err != nil {
			t.Fatal(err)
		}
		return box
	}
	boxes := []*snapshots.Box{running(a, "amber-fox"), running(b, "brisk-wren")}
	if _, err := a.Client.Insert(ctx, jobs.SweepArgs{Name: "automatic"}, nil); err != nil {
		t.Fatal(err)
	}
	for _, box := range boxes {
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			var n int
			if err := a.Pool.QueryRow(ctx, "SELECT count(*) FROM snapshots WHERE box_id = $1 AND automatic AND state = 'ready'", box.ID).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s, on %s, has no automatic snapshot 60 s after the automatic job ran", box.Name, ownerOf(t, a.Pool, box.Name))
			}
		}
	}
}
