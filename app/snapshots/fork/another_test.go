package fork_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/providers/local"
)

// TestAForkOnAnotherHostNeedsAContentStore: two cores on one database,
// each with a data folder of its own and no content store. A fork asked on
// host-b of a snapshot of a box host-a owns is refused in the move's
// words, saying whose the snapshots are and the fix, one fork or many,
// and the dialog's plan says so too; a fork of the box as it is now is
// refused, saying to ask it on host-a or fork a ready snapshot. Nothing is
// admitted. On the old code the fork read the box's folder on host-b and
// was refused as gone from this host.
func TestAForkOnAnotherHostNeedsAContentStore(t *testing.T) {
	pool := dbtest.New(t)
	mk := func(host string) *coretest.Env {
		root := t.TempDir()
		_ = local.Passable(root, os.TempDir())
		e, err := coretest.Build(context.Background(), pool, coretest.Options{Host: host, LocalRoot: root})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.Stop)
		return e
	}
	ctx := context.Background()
	a, b := mk("host-a"), mk("host-b")
	a.Box(t, snapshots.Owner(), "amber-fox")
	sn := a.TakeReady(t, snapshots.Owner(), "amber-fox", "one")

	want := snapshots.NotSharedWords("amber-fox", "host-a")
	refused := func(what string, err error, words string) {
		t.Helper()
		var r *snapshots.Refusal
		if !errors.As(err, &r) || r.Words != words {
			t.Fatalf("%s on host-b: %v; want refused: %q", what, err, words)
		}
	}
	_, err := b.Forks.Fork(ctx, snapshots.Owner(), fork.ForkRequest{Box: "amber-fox", Snapshot: sn.ID, Name: "forked-on-b"})
	refused("a fork", err, want)
	_, err = b.Forks.ForkMany(ctx, snapshots.Owner(), fork.ForkManyRequest{Box: "amber-fox", Snapshot: sn.ID, Name: "twin", Count: 2})
	refused("a fork into 2", err, want)
	if _, _, _, owner, err := b.Forks.Plan(ctx, snapshots.Owner(), "amber-fox", sn.ID); owner != "host-a" {
		t.Fatalf("the fork's plan on host-b says the box's host is %q, want host-a", owner)
	} else {
		refused("the fork's plan", err, want)
	}
	_, err = b.Forks.CaptureNow(ctx, snapshots.Owner(), fork.NowRequest{Box: "amber-fox", Name: "now-on-b"})
	var r *snapshots.Refusal
	if !errors.As(err, &r) || !strings.Contains(r.Words, "fork it as it is now from host host-a's own pages, API or CLI, or fork one of its ready snapshots here") {
		t.Fatalf("a fork of the box now on host-b: %v; want refused, saying to ask it on host-a", err)
	}
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM operations WHERE kind IN ('fork', 'take') AND by_kind <> ''").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d forks and takes recorded; want only the take of one", n)
	}
	// On host-a, its own host, the box forks as ever.
	op, err := a.Forks.Fork(ctx, snapshots.Owner(), fork.ForkRequest{Box: "amber-fox", Snapshot: sn.ID, Name: "forked-on-a"})
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("the fork on host-a ended %s", got.State)
	}
}
