package sweeps_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// TestReconcileLostAfterTwoListings: on the local backend, a snapshot
// deleted behind boxsnap's back is lost only after two successful listings
// LostAfter apart, never at the first; housekeeping removes the lost record
// after 7 days, not before.
func TestReconcileLostAfterTwoListings(t *testing.T) {
	t.Parallel()
	clk := coretest.NewClock(time.Now())
	e := coretest.New(t, coretest.Options{Now: clk.Now})
	ctx := context.Background()
	b := e.Box(t, snapshots.Owner(), "amber-fox")
	gone := taken(t, e, b.Name, "gone")
	stays := taken(t, e, b.Name, "stays")
	if err := e.Local.DeleteSnapshot(ctx, providers.SnapshotRef{ID: gone.ID, Ref: gone.Ref, Guest: providers.Guest{Backend: "local", Kind: b.Kind, Ref: b.GuestRef}}, nil); err != nil {
		t.Fatal(err)
	}
	for i, step := range []struct {
		advance time.Duration
		want    string
	}{{0, snapshots.StateReady}, {snapshots.LostAfter - time.Second, snapshots.StateReady}, {time.Second, snapshots.StateLost}} {
		clk.Advance(step.advance)
		rep, err := e.Sweeps.Reconcile(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.StateOf(gone.ID); got != step.want {
			t.Fatalf("listing %d (%+v): %s, want %s", i+1, rep, got, step.want)
		}
	}
	if got := e.StateOf(stays.ID); got != snapshots.StateReady {
		t.Fatalf("the snapshot still there is %s", got)
	}
	clk.Advance(6 * 24 * time.Hour)
	if _, err := e.Sweeps.Housekeep(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.StateOf(gone.ID); got != snapshots.StateLost {
		t.Fatalf("after 6 days the lost record is %s", got)
	}
	clk.Advance(24*time.Hour + time.Minute)
	rep, err := e.Sweeps.Housekeep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Lost != 1 || e.StateOf(gone.ID) != "gone" || e.StateOf(stays.ID) != snapshots.StateReady {
		t.Fatalf("after 7 days: %+v, lost %s, other %s", rep, e.StateOf(gone.ID), e.StateOf(stays.ID))
	}
}

// TestHousekeepPrunesBoxLog: a box's log keeps its newest BoxLogKeep events.
func TestHousekeepPrunesBoxLog(t *testing.T) {
	t.Parallel()
	e := coretest.New(t, coretest.Options{})
	ctx := context.Background()
	b := e.Box(t, snapshots.Owner(), "amber-fox")
	if _, err := e.Pool.Exec(ctx, `INSERT INTO box_log (box_id, kind, actor_kind, words)
		SELECT $1, 'snapshot-taken', 'owner', 'event ' || g FROM generate_series(1, $2::int) g`, b.ID, snapshots.BoxLogKeep+5); err != nil {
		t.Fatal(err)
	}
	rep, err := e.Sweeps.Housekeep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	log, err := e.Boxes.BoxLog(ctx, snapshots.Owner(), b.ID, snapshots.BoxLogKeep)
	if err != nil {
		t.Fatal(err)
	}
	if rep.LogPruned < 5 || len(log) != snapshots.BoxLogKeep || log[0].Words != fmt.Sprintf("event %d", snapshots.BoxLogKeep+5) {
		t.Fatalf("pruned %d, kept %d, newest %q", rep.LogPruned, len(log), log[0].Words)
	}
}

// TestReconcileRecordsAgain: a labelled snapshot of a box that exists, with
// no record, gets its record again, by unknown, named from its time; a
// second reconcile changes nothing.
func TestReconcileRecordsAgain(t *testing.T) {
	t.Parallel()
	e := coretest.New(t, coretest.Options{})
	ctx := context.Background()
	b := e.Box(t, snapshots.Owner(), "amber-fox")
	sn := taken(t, e, b.Name, "before the migration")
	if _, err := e.Pool.Exec(ctx, "DELETE FROM snapshots WHERE id = $1", sn.ID); err != nil {
		t.Fatal(err)
	}
	rep, err := e.Sweeps.Reconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	back, _, err := e.Core.Snapshot(ctx, snapshots.Owner(), sn.ID)
	if err != nil {
		t.Fatalf("not recorded again (%+v): %v", rep, err)
	}
	want := snapshots.DefaultName(back.TakenAt, e.Core.TimeZone(ctx))
	if rep.Recorded != 1 || back.ByKind != "unknown" || back.Found || back.State != snapshots.StateReady || back.Name != want || back.Ref != sn.Ref {
		t.Fatalf("recorded again as %+v (%+v); want by unknown, named %q", back, rep, want)
	}
	if snapshots.ByWords(back.ByKind, "", "") != "by unknown" {
		t.Fatalf("by words %q", snapshots.ByWords(back.ByKind, "", ""))
	}
	rep, err = e.Sweeps.Reconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Recorded+rep.Found+rep.Kept+rep.Missing+rep.Lost != 0 {
		t.Fatalf("a second reconcile: %+v", rep)
	}
}

// TestHousekeepForgetsOldRetryKeys: an agent tool's answer kept under a
// retry key stays for ToolAnswersKeptFor, so a retry finds it, and
// housekeeping forgets it after that, not before.
func TestHousekeepForgetsOldRetryKeys(t *testing.T) {
	t.Parallel()
	clk := coretest.NewClock(time.Now())
	e := coretest.New(t, coretest.Options{Now: clk.Now})
	ctx := context.Background()
	c := snapshots.Owner()
	if err := e.Core.KeepToolAnswer(ctx, c, "retry-1", snapshots.ToolAnswer{Tool: "box_snapshot", Args: "a", Status: 201, Body: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	kept := func() bool {
		t.Helper()
		a, err := e.Core.KeptToolAnswer(ctx, c, "retry-1")
		if err != nil {
			t.Fatal(err)
		}
		return a != nil
	}
	clk.Advance(snapshots.ToolAnswersKeptFor - time.Hour)
	if rep, err := e.Sweeps.Housekeep(ctx); err != nil || rep.ToolAnswers != 0 || !kept() {
		t.Fatalf("within %s housekeeping forgot a retry key: %+v, %v", snapshots.ToolAnswersKeptFor, rep, err)
	}
	clk.Advance(2 * time.Hour)
	if rep, err := e.Sweeps.Housekeep(ctx); err != nil || rep.ToolAnswers != 1 || kept() {
		t.Fatalf("after %s housekeeping kept the retry key: %+v, %v", snapshots.ToolAnswersKeptFor, rep, err)
	}
}
