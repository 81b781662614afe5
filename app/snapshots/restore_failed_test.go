package snapshots_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// busyBox makes the person's box with a process that runs until stopped,
// and checks that it runs.
func busyBox(t *testing.T, e *coretest.Env, name string) (*snapshots.Box, string) {
	t.Helper()
	b, err := e.Boxes.AcquireBox(context.Background(), snapshots.Owner(),
		snapshots.BoxRequest{Name: name, Backend: "local", Command: "while :; do sleep 1; done"})
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, e, name, "once made")
	return b, e.Local.BoxDir(providers.Guest{Ref: b.GuestRef})
}

func mustRun(t *testing.T, e *coretest.Env, box, when string) {
	t.Helper()
	st, err := e.Boxes.BoxStatus(context.Background(), snapshots.Owner(), box)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Running {
		t.Fatalf("%s does not run %s", box, when)
	}
}

// undosOf counts the box's undos that hold a place in its limit (not failed,
// not being deleted).
func undosOf(t *testing.T, e *coretest.Env, box string) int {
	t.Helper()
	list, err := e.Core.List(context.Background(), snapshots.Owner(), snapshots.ListQuery{Box: box})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range list {
		for _, s := range l.Snapshots {
			if s.IsUndo() && s.State != snapshots.StateFailed && s.State != snapshots.StateDeleting {
				n++
			}
		}
	}
	return n
}

// restoreEnded restores box to snapshot and waits for the restore to end.
func restoreEnded(t *testing.T, e *coretest.Env, box, snapshot string) *snapshots.Operation {
	t.Helper()
	op, err := e.Restores.Restore(context.Background(), snapshots.Owner(), snapshots.RestoreRequest{Box: box, Snapshot: snapshot, Replace: true})
	if err != nil {
		t.Fatal(err)
	}
	return e.Wait(t, op)
}

// TestFailedRestoreReplacesUndoAndRestarts: a restore that fails after it
// stopped a running box (its target's content damaged on disk, so the local
// backend refuses the rollback) leaves the box as it found it: its files as
// they were, the box started again, and its undo replacing the oldest, so the
// box never holds more than 2 undos however many fail (157 a box were once
// measured). The operation's words say so.
func TestFailedRestoreReplacesUndoAndRestarts(t *testing.T) {
	t.Parallel()
	e := coretest.New(t, coretest.Options{})
	_, dir := busyBox(t, e, "busy-fox")
	file := filepath.Join(dir, "notes.txt")
	for i := 1; i <= 5; i++ {
		kept := fmt.Sprintf("kept %d", i)
		if err := os.WriteFile(file, []byte(kept), 0o644); err != nil {
			t.Fatal(err)
		}
		target := e.TakeReady(t, snapshots.Owner(), "busy-fox", fmt.Sprintf("target %d", i))
		now := fmt.Sprintf("now %d", i)
		if err := os.WriteFile(file, []byte(now), 0o644); err != nil {
			t.Fatal(err)
		}
		// The target's one piece of content the rollback must write, damaged
		// (a new file in its place, never the box's through a link).
		sum := sha256.Sum256([]byte(kept))
		h := hex.EncodeToString(sum[:])
		content := filepath.Join(e.Local.Root(), "content", h[:2], h[2:])
		if err := os.Remove(content); err != nil {
			t.Fatalf("the target's content: %v", err)
		}
		if err := os.WriteFile(content, []byte("damage"), 0o600); err != nil {
			t.Fatal(err)
		}

		got := restoreEnded(t, e, "busy-fox", target.ID)
		if got.State != snapshots.OpFailed {
			t.Fatalf("restore %d to a damaged target ended %s", i, got.State)
		}
		if got.Step != string(providers.StepRollback) {
			t.Fatalf("restore %d failed at %q, want after its stop, at the rollback", i, got.Step)
		}
		const want = "the files are as they were and the box was started again"
		if coretest.Deref(got.Observed) != want {
			t.Fatalf("restore %d: observed %q, want %q (error %q)", i, coretest.Deref(got.Observed), want, coretest.Deref(got.Error))
		}
		if b, _ := os.ReadFile(file); string(b) != now {
			t.Fatalf("restore %d left the file holding %q, want %q", i, b, now)
		}
		mustRun(t, e, "busy-fox", fmt.Sprintf("after failed restore %d", i))
		if n := undosOf(t, e, "busy-fox"); n > snapshots.UndosPerBox || (i >= 2 && n != snapshots.UndosPerBox) {
			t.Fatalf("after failed restore %d the box holds %d undos, want %d at most (and %d from the second)", i, n, snapshots.UndosPerBox, snapshots.UndosPerBox)
		}
	}
}

// failingSteps wraps a backend so a restore's step fails when asked: start
// before it runs; rollback after the real rollback ran (its files changed).
type failingSteps struct {
	providers.Backend
	start, rollback atomic.Bool
}

func (f *failingSteps) RestoreSnapshot(ctx context.Context, g providers.Guest, ref providers.SnapshotRef, step providers.RestoreStep, rec providers.Recorder) (providers.RestoreProgress, error) {
	if step == providers.StepStart && f.start.Load() {
		return providers.RestoreProgress{}, errors.New("the test's start fails")
	}
	p, err := f.Backend.RestoreSnapshot(ctx, g, ref, step, rec)
	if err == nil && step == providers.StepRollback && f.rollback.Swap(false) {
		return providers.RestoreProgress{}, errors.New("the test's rollback fails part way")
	}
	return p, err
}

// TestFailedRestoreSaysHowItLeftTheBox: a rollback that fails having changed
// files is undone from the restore's undo, and the box started again; a
// start that fails leaves the box stopped with the snapshot's files, and
// the words say so. Either way the box keeps 2 undos at most.
func TestFailedRestoreSaysHowItLeftTheBox(t *testing.T) {
	t.Parallel()
	var fail *failingSteps
	e := coretest.New(t, coretest.Options{Wrap: func(b snapshots.Backend) snapshots.Backend {
		fail = &failingSteps{Backend: b.Snap}
		b.Snap = fail
		return b
	}})
	_, dir := busyBox(t, e, "odd-fox")
	file := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(file, []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	target := e.TakeReady(t, snapshots.Owner(), "odd-fox", "target")
	for i := 1; i <= 3; i++ {
		now := fmt.Sprintf("now %d", i)
		if err := os.WriteFile(file, []byte(now), 0o644); err != nil {
			t.Fatal(err)
		}
		fail.rollback.Store(true)
		got := restoreEnded(t, e, "odd-fox", target.ID)
		const want = "the files were put back as they were and the box was started again"
		if got.State != snapshots.OpFailed || coretest.Deref(got.Observed) != want {
			t.Fatalf("a rollback failed part way: %s, observed %q, want %q", got.State, coretest.Deref(got.Observed), want)
		}
		if b, _ := os.ReadFile(file); string(b) != now {
			t.Fatalf("the undo put back %q, want %q", b, now)
		}
		mustRun(t, e, "odd-fox", "after a failed rollback")
		if n := undosOf(t, e, "odd-fox"); n > snapshots.UndosPerBox {
			t.Fatalf("after failed restore %d the box holds %d undos", i, n)
		}
	}

	fail.start.Store(true)
	got := restoreEnded(t, e, "odd-fox", target.ID)
	want := "the files are the snapshot's; the box is stopped: starting it failed: "
	if got.State != snapshots.OpFailed || !strings.HasPrefix(coretest.Deref(got.Observed), want) || !strings.Contains(coretest.Deref(got.Observed), "the test's start fails") {
		t.Fatalf("a start failed: %s, observed %q, want %q…", got.State, coretest.Deref(got.Observed), want)
	}
	if b, _ := os.ReadFile(file); string(b) != "kept" {
		t.Fatalf("the file holds %q, want the snapshot's", b)
	}
	st, err := e.Boxes.BoxStatus(context.Background(), snapshots.Owner(), "odd-fox")
	if err != nil || st.Running {
		t.Fatalf("the box runs (%v) though its start failed", err)
	}
	if n := undosOf(t, e, "odd-fox"); n > snapshots.UndosPerBox {
		t.Fatalf("after a failed start the box holds %d undos", n)
	}
}
