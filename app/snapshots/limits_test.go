package snapshots_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
)

func TestLimits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("an agent's sixth replaces its thread's oldest, once ready", func(t *testing.T) {
		t.Parallel()
		e := coretest.New(t, coretest.Options{})
		_, agent, _ := e.Thread(t, "Fix the sign-in flow")
		e.Box(t, agent, "amber-fox")
		var first *snapshots.Snapshot
		for i := 1; i <= snapshots.DefaultPerBox; i++ {
			sn := e.TakeReady(t, agent, "amber-fox", fmt.Sprintf("s%d", i))
			if i == 1 {
				first = sn
			}
		}
		// The person's snapshot and a kept one are never replaced.
		op, _, err := e.Take.Take(ctx, agent, taking.TakeRequest{Box: "amber-fox", Name: "s6"})
		if err != nil {
			t.Fatal(err)
		}
		done := e.Wait(t, op)
		if done.State != snapshots.OpDone {
			t.Fatalf("the sixth ended %s", done.State)
		}
		got := names(t, e, "amber-fox")
		if _, ok := got["s1"]; ok || len(got) != snapshots.DefaultPerBox {
			t.Fatalf("after the sixth: %v (the oldest, %s, should be gone)", keys(got), first.ID)
		}
		if _, ok := got["s6"]; !ok {
			t.Fatal("the sixth is missing")
		}
		log, err := e.Boxes.BoxLog(ctx, snapshots.Owner(), "amber-fox", 50)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, ev := range log {
			if ev.Kind == snapshots.EvSnapshotDeleted && strings.Contains(ev.Words, "‘s1’") && strings.Contains(ev.Words, "the per-box limit") {
				found = true
			}
		}
		if !found {
			t.Fatal("the box log does not say the per-box limit deleted ‘s1’")
		}
	})

	t.Run("the owner's sixth is refused with what to delete", func(t *testing.T) {
		t.Parallel()
		e := coretest.New(t, coretest.Options{})
		e.Box(t, snapshots.Owner(), "work-pc")
		for i := 1; i <= snapshots.DefaultPerBox; i++ {
			e.TakeReady(t, snapshots.Owner(), "work-pc", fmt.Sprintf("s%d", i))
		}
		_, _, err := e.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: "work-pc"})
		coretest.RefusedWith(t, err, "work-pc has 5 of 5 snapshots.", "Delete one to free it:", "‘s1’")
		if got := names(t, e, "work-pc"); len(got) != 5 {
			t.Fatalf("a refused take changed the box: %v", keys(got))
		}
	})

	t.Run("an agent with none of its own to delete is refused, naming only what it may see", func(t *testing.T) {
		t.Parallel()
		e := coretest.New(t, coretest.Options{})
		th, agent, _ := e.Thread(t, "Fix the sign-in flow")
		_, other, _ := e.Thread(t, "Another thread")
		b := e.Box(t, agent, "brisk-lake")
		// Another thread ran on the box and took one there; the person took
		// three and kept this agent's one. None is this agent's to delete.
		if _, err := e.Boxes.SetPresence(ctx, snapshots.Owner(), b.ID, snapshots.Presence{Workspaces: []snapshots.Workspace{{Thread: other.Thread, RunsOn: true}}}); err != nil {
			t.Fatal(err)
		}
		e.TakeReady(t, other, "brisk-lake", "theirs")
		if _, err := e.Boxes.SetPresence(ctx, snapshots.Owner(), b.ID, snapshots.Presence{}); err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= 2; i++ {
			e.TakeReady(t, snapshots.Owner(), "brisk-lake", fmt.Sprintf("p%d", i))
		}
		_ = th
		e.TakeReady(t, agent, "brisk-lake", "mine")
		kop, err := e.Keeps.Keep(ctx, snapshots.Owner(), snapshots.KeepRequest{Box: "brisk-lake", Snapshot: "mine"})
		if err != nil {
			t.Fatal(err)
		}
		e.Wait(t, kop)
		e.TakeReady(t, snapshots.Owner(), "brisk-lake", "p3")
		_, _, err = e.Take.Take(ctx, agent, taking.TakeRequest{Box: "brisk-lake"})
		coretest.RefusedWith(t, err, "brisk-lake has 5 of 5 snapshots.", "‘p1’", "‘mine’", "and others you cannot see.")
		if r, _ := snapshots.AsRefusal(err); strings.Contains(r.Words, "theirs") {
			t.Fatalf("the refusal names another thread's snapshot: %q", r.Words)
		}
	})

	t.Run("bad names and notes change nothing", func(t *testing.T) {
		t.Parallel()
		e := coretest.New(t, coretest.Options{})
		_, agent, _ := e.Thread(t, "Fix the sign-in flow")
		e.Box(t, agent, "calm-moss")
		for _, req := range []taking.TakeRequest{
			{Box: "calm-moss", Name: strings.Repeat("n", 61)},
			{Box: "calm-moss", Name: "ok", Note: strings.Repeat("x", 1025)},
			{Box: "no-such-box"},
			{Box: "calm-moss", Memory: true},
		} {
			if _, _, err := e.Take.Take(ctx, agent, req); err == nil {
				t.Errorf("take %+v was admitted", req)
			} else if _, ok := snapshots.AsRefusal(err); !ok {
				t.Errorf("take %+v: not a refusal: %v", req, err)
			}
		}
		if got := names(t, e, "calm-moss"); len(got) != 0 {
			t.Fatalf("refused takes left %v", keys(got))
		}
	})
}

// failDelete fails the backend's next delete at its first step, as the
// local backend's did on a full disk, leaving the snapshot incomplete.
type failDelete struct {
	providers.Backend
	armed atomic.Bool
}

func (f *failDelete) DeleteSnapshot(ctx context.Context, ref providers.SnapshotRef, rec providers.Recorder) error {
	if f.armed.CompareAndSwap(true, false) {
		return fmt.Errorf("delete snapshot stopped at its mark step: %w (no space left on device)", providers.ErrIncomplete)
	}
	return f.Backend.DeleteSnapshot(ctx, ref, rec)
}

// TestLimitHoldsWhenOldestIncomplete: the per-box limit holds when the
// delete of the oldest fails and leaves it incomplete: the sixth replaces
// the next oldest instead, and a later take replaces the incomplete one
// too, so the box never has 6 of 5.
func TestLimitHoldsWhenOldestIncomplete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fail := &failDelete{}
	e := coretest.New(t, coretest.Options{Wrap: func(b snapshots.Backend) snapshots.Backend {
		fail.Backend = b.Snap
		b.Snap = fail
		return b
	}})
	_, agent, _ := e.Thread(t, "Fix the sign-in flow")
	e.Box(t, agent, "amber-fox")
	for i := 1; i <= snapshots.DefaultPerBox; i++ {
		e.TakeReady(t, agent, "amber-fox", fmt.Sprintf("s%d", i))
	}
	result := func(name string) taking.TakeResult {
		t.Helper()
		op, _, err := e.Take.Take(ctx, agent, taking.TakeRequest{Box: "amber-fox", Name: name})
		if err != nil {
			t.Fatalf("take %s: %v", name, err)
		}
		done := e.Wait(t, op)
		var res taking.TakeResult
		if done.State != snapshots.OpDone || jsonOf(done.Result, &res) != nil {
			t.Fatalf("take %s ended %s: %s", name, done.State, coretest.Deref(done.Error))
		}
		return res
	}
	fail.armed.Store(true)
	if res := result("s6"); res.Count > res.Limit {
		t.Errorf("the sixth, whose oldest could not be deleted: amber-fox has %d of %d snapshots", res.Count, res.Limit)
	}
	if got := names(t, e, "amber-fox"); got["s1"] == nil || got["s1"].State != snapshots.StateIncomplete {
		t.Fatalf("s1 after its failed delete: %+v, want incomplete", got["s1"])
	}
	if res := result("s7"); res.Count > res.Limit {
		t.Errorf("the seventh: amber-fox has %d of %d snapshots", res.Count, res.Limit)
	}
	if got := names(t, e, "amber-fox"); got["s1"] != nil {
		t.Errorf("the incomplete oldest, s1, is still there after the seventh: %v", keys(got))
	}
}

// jsonOf reads an operation's JSON result into v.
func jsonOf(raw []byte, v any) error { return json.Unmarshal(raw, v) }
