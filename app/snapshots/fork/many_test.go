package fork_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	forks "github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/providers"
)

// TestForkMany: a fork into N boxes in one call makes them from one
// capture, each fork its own box with its own identity and its own result,
// all in the agent's thread; the count is at most the setting, a name one
// box holds refuses all N before any is made, and a repeat of the call is
// the same N forks.
func TestForkMany(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := coretest.New(t, coretest.Options{})
	_, agent, _ := e.Thread(t, "Try three fixes")
	src := e.Box(t, agent, "amber-fox")
	dir := e.Local.BoxDir(providers.Guest{Ref: src.GuestRef})
	write(t, filepath.Join(dir, "notes.txt"), "as it was at the take")
	sn := e.TakeReady(t, agent, "amber-fox", "before the fixes")
	write(t, filepath.Join(dir, "notes.txt"), "changed after")

	_, err := e.Forks.ForkMany(ctx, agent, forks.ForkManyRequest{Box: "amber-fox", Snapshot: sn.ID, Name: "try", Count: forks.DefaultMaxCount + 1})
	coretest.RefusedWith(t, err, fmt.Sprintf("A fork makes 1 to %d boxes in one call, not %d.", forks.DefaultMaxCount, forks.DefaultMaxCount+1))
	// A name a box holds refuses all of them: none is made.
	e.Box(t, agent, "try-2")
	_, err = e.Forks.ForkMany(ctx, agent, forks.ForkManyRequest{Box: "amber-fox", Snapshot: sn.ID, Name: "try", Count: 3})
	coretest.RefusedWith(t, err, "A box named try-2 exists already. No fork was made.")
	for _, name := range []string{"try-1", "try-3"} {
		if _, err := e.Core.Box(ctx, agent, name); err == nil {
			t.Fatalf("%s was made by a refused call", name)
		}
	}

	const n = 3
	req := forks.ForkManyRequest{Box: "amber-fox", Snapshot: sn.ID, Name: "fix", Count: n, RequestID: "rq-three-fixes"}
	ops, err := e.Forks.ForkMany(ctx, agent, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != n {
		t.Fatalf("%d operations for %d forks", len(ops), n)
	}
	again, err := e.Forks.ForkMany(ctx, agent, req)
	if err != nil || len(again) != n {
		t.Fatalf("a repeat of the call: %d operations, %v", len(again), err)
	}
	ids := map[string]bool{}
	for i, op := range ops {
		if again[i].ID != op.ID {
			t.Fatalf("the repeat's fork %d is %s, not %s", i+1, again[i].ID, op.ID)
		}
		done := e.Wait(t, op)
		if done.State != snapshots.OpDone {
			t.Fatalf("fork %d ended %s: %s", i+1, done.State, coretest.Deref(done.Error))
		}
		var res forks.ForkResult
		if err := json.Unmarshal(done.Result, &res); err != nil || !strings.HasPrefix(res.From, "forked from amber-fox at ") {
			t.Fatalf("result %s (%v)", done.Result, err)
		}
		want := fmt.Sprintf("fix-%d", i+1)
		if res.Name != want {
			t.Fatalf("fork %d is named %s, not %s", i+1, res.Name, want)
		}
		b, err := e.Core.Box(ctx, agent, want)
		if err != nil {
			t.Fatalf("the agent cannot see its fork %s: %v", want, err)
		}
		if b.ThreadID == nil || *b.ThreadID != agent.Thread || b.ID == src.ID || ids[b.ID] || b.HeadID == nil || *b.HeadID != sn.ID {
			t.Fatalf("fork %s: %+v", want, b)
		}
		ids[b.ID] = true
		fdir := e.Local.BoxDir(providers.Guest{Ref: b.GuestRef})
		if got := read(t, filepath.Join(fdir, "notes.txt")); got != "as it was at the take" {
			t.Fatalf("%s holds %q", want, got)
		}
		if id := read(t, filepath.Join(fdir, ".boxsnap/identity")); !strings.Contains(id, b.ID) || strings.Contains(id, src.ID) {
			t.Fatalf("%s's identity marker: %s", want, id)
		}
	}
	// One capture: the source holds the one snapshot it took.
	all, err := e.Core.SnapshotsOfBox(ctx, e.Pool, src.ID)
	if err != nil || len(all) != 1 || all[0].ID != sn.ID {
		t.Fatalf("the source's snapshots after %d forks: %d (%v)", n, len(all), err)
	}
	// Another thread cannot fork what it cannot see, one or many.
	_, other, _ := e.Thread(t, "Another")
	_, err = e.Forks.ForkMany(ctx, other, forks.ForkManyRequest{Snapshot: sn.ID, Count: 2})
	coretest.RefusedWith(t, err, "No snapshot "+sn.ID+" that you can see.")
}

// TestForkManyNamesAsOneFork: with no name, the forks take the names a
// single fork would take in turn.
func TestForkManyNamesAsOneFork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := coretest.New(t, coretest.Options{})
	b := e.Box(t, snapshots.Owner(), "brisk-lake")
	write(t, filepath.Join(e.Local.BoxDir(providers.Guest{Ref: b.GuestRef}), "notes.txt"), "x")
	sn := e.TakeReady(t, snapshots.Owner(), "brisk-lake", "base")
	e.Box(t, snapshots.Owner(), "brisk-lake-fork-2")
	ops, err := e.Forks.ForkMany(ctx, snapshots.Owner(), forks.ForkManyRequest{Box: "brisk-lake", Snapshot: sn.ID, Count: 2})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, op := range ops {
		p, err := e.Forks.Kinds().Fork.Params(op)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p.Name)
		e.Wait(t, op)
	}
	if strings.Join(got, " ") != "brisk-lake-fork brisk-lake-fork-3" {
		t.Fatalf("names %v", got)
	}
}
