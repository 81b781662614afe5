package hosts_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/hosts"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local"
)

// TestACopyWhoseOwnerIsNoLiveHostStays: a host renamed (its process now
// records host-a2, where it recorded host-a when it made amber-fox) holds
// the only copy of a box the database says host-a owns. host-a is not seen
// alive any more, so the renamed host keeps the copy; nor does it release
// it when the box's owner is a host that never ran. Once the box's owner
// is a host seen alive (host-b), the copy is released.
func TestACopyWhoseOwnerIsNoLiveHostStays(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.New(t)
	clk := newClock()
	root := t.TempDir()
	if err := local.Passable(root, os.TempDir()); err != nil {
		t.Fatal(err)
	}
	// Each box a folder, not a file system of its own: host-a's stop
	// unmounts its boxes, and the renamed host reads the folder it left.
	build := func(host, root string) *coretest.Env {
		e, err := coretest.Build(ctx, pool, coretest.Options{Host: host, LocalRoot: root, NoWorkers: true, Now: clk.now, NoDiskImages: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.Stop)
		return e
	}
	a := build("host-a", root)
	if err := a.Hosts.Seen(ctx); err != nil {
		t.Fatal(err)
	}
	box := a.Box(t, snapshots.Owner(), "amber-fox")
	dir := a.Local.BoxDir(providers.Guest{Ref: box.GuestRef})
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("the only copy"), 0o644); err != nil {
		t.Fatal(err)
	}
	a.Stop()

	clk.forward(hosts.SeenAliveFor + time.Minute)
	renamed := build("host-a2", root)
	if err := renamed.Hosts.Seen(ctx); err != nil {
		t.Fatal(err)
	}
	quiet := func() { // the copy's state unchanged for LeftQuiet, on the file clock
		past := time.Now().Add(-hosts.LeftQuiet - time.Minute)
		for _, p := range []string{dir, filepath.Join(root, "state", box.GuestRef+".json")} {
			if err := os.Chtimes(p, past, past); err != nil {
				t.Fatal(err)
			}
		}
	}
	stays := func(why string) {
		t.Helper()
		quiet()
		rep, err := renamed.Hosts.ReleaseLeft(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Released) > 0 {
			t.Fatalf("%s: host-a2 released %v", why, rep.Released)
		}
		if data, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(data) != "the only copy" {
			t.Fatalf("%s: amber-fox's copy on host-a2: %q %v", why, data, err)
		}
	}
	stays("owned by host-a, renamed, not seen for " + (hosts.SeenAliveFor + time.Minute).String())

	setOwner(t, pool, box.ID, "host-never-ran")
	stays("owned by a host that never ran")

	b := build("host-b", t.TempDir())
	if err := b.Hosts.Seen(ctx); err != nil {
		t.Fatal(err)
	}
	setOwner(t, pool, box.ID, "host-b")
	quiet()
	rep, err := renamed.Hosts.ReleaseLeft(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Released, []string{"amber-fox"}) {
		t.Fatalf("owned by host-b, seen alive: host-a2 released %v, want amber-fox", rep.Released)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("amber-fox's folder on host-a2 after its release: %v", err)
	}
}

// setOwner makes host the owner of box in the database, as a move's
// admission does.
func setOwner(t *testing.T, pool *pgxpool.Pool, box, host string) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), "UPDATE boxes SET owner_host = $2 WHERE id = $1", box, host); err != nil {
		t.Fatal(err)
	}
}

// TestACopyOfAReleasedBoxIsKeptFound: a box whose copy is on host-a was
// released elsewhere (its row says released) while host-a was away. The
// copy belongs to no box: host-a keeps it, found, never deleting it, and
// says so in the released box's log, once.
func TestACopyOfAReleasedBoxIsKeptFound(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.New(t)
	a := hostEnv(t, pool, "host-a", false, nil)
	box := a.Box(t, snapshots.Owner(), "amber-fox")
	dir := a.Local.BoxDir(providers.Guest{Ref: box.GuestRef})
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("the old copy"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "UPDATE boxes SET owner_host = 'host-b', state = 'released', released_at = now() WHERE id = $1", box.ID); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-hosts.LeftQuiet - time.Minute)
	for _, p := range []string{dir, filepath.Join(a.Local.Root(), "state", box.GuestRef+".json")} {
		if err := os.Chtimes(p, past, past); err != nil {
			t.Fatal(err)
		}
	}
	for round, want := range [][]string{{"amber-fox"}, nil} {
		rep, err := a.Hosts.ReleaseLeft(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(rep.Found, want) || len(rep.Released) > 0 {
			t.Fatalf("round %d: found %v, released %v; want found %v, none released", round, rep.Found, rep.Released, want)
		}
	}
	if data, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(data) != "the old copy" {
		t.Fatalf("the copy found on host-a: %q %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(a.Local.Root(), "state", box.GuestRef+".found")); err != nil {
		t.Fatalf("the copy is not marked found: %v", err)
	}
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM box_log WHERE box_id = $1 AND kind = $2", box.ID, hosts.EvLeftFound).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("the released box's log says %d times that its copy was found; want once", n)
	}
}
