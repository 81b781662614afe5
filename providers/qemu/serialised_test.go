package qemu_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/qemu"
)

// holder holds the backend at one named point until the test lets it go.
type holder struct {
	mu      sync.Mutex
	point   string
	reached chan struct{}
	release chan struct{}
}

// hook is the backend's Hook: at the armed point it says so and waits.
func (h *holder) hook(point string) {
	h.mu.Lock()
	if point != h.point {
		h.mu.Unlock()
		return
	}
	reached, release := h.reached, h.release
	h.point = ""
	h.mu.Unlock()
	close(reached)
	<-release
}

// arm holds the backend the next time it reaches point; release lets it
// go, once, and the test's end lets it go too, so a failed test never
// leaves a worker held.
func (h *holder) arm(t *testing.T, point string) (reached chan struct{}, release func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.point, h.reached, h.release = point, make(chan struct{}), make(chan struct{})
	var once sync.Once
	ch := h.release
	release = func() { once.Do(func() { close(ch) }) }
	t.Cleanup(release)
	return h.reached, release
}

// waitReached waits until the backend is held, up to a deadline a
// restore's undo under TCG keeps.
func waitReached(t *testing.T, reached chan struct{}) {
	t.Helper()
	select {
	case <-reached:
	case <-time.After(2 * bootWait):
		t.Fatal("the backend never reached the point it was to be held at")
	}
}

// TestSerialisedAndEligibleOnQEMU: on a real guest, the operations on a
// box run one at a time, and whether a snapshot may change is checked at
// the moment of the change: two takes at once (disk, and disk and memory)
// run one after the other, both ready, each holding the file the guest
// wrote; a take and a restore asked at once end with the take holding what
// the restore replaced and the guest holding the target's file; a restore
// under way refuses the delete of its target, naming it; a delete under
// way refuses a restore to the snapshot it deletes; and a repeated restore
// request is the same operation, with one undo.
func TestSerialisedAndEligibleOnQEMU(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := &holder{}
	b, _ := newBackendConfig(t, func(c *qemu.Config) { c.Hook = h.hook })
	env := newCore(t, b)
	box, err := env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "busy-owl", Kind: qemu.KindLinux, Backend: b.ID(), Template: template})
	if err != nil {
		t.Fatalf("AcquireBox: %v", err)
	}
	g := providers.Guest{Backend: b.ID(), Kind: qemu.KindLinux, Ref: box.GuestRef, Generation: 1}
	boot(t, b, g)
	state := func() string { return strings.TrimSpace(sh(t, b, g, "cat /root/state")) }
	holds := func(sn *snapshots.Snapshot) string {
		t.Helper()
		var read strings.Builder
		if _, err := b.ReadFile(ctx, providers.SnapshotRef{ID: sn.ID, Ref: sn.Ref, Guest: g}, "root/state", &read); err != nil {
			t.Fatalf("read %s's file: %v", sn.Name, err)
		}
		return read.String()
	}
	ready := func(op *snapshots.Operation, what string) *snapshots.Operation {
		t.Helper()
		got := waitOp(t, env, op.ID)
		if got.State != snapshots.OpDone {
			t.Fatalf("%s ended %s: %s (%s)", what, got.State, coretest.Deref(got.Error), coretest.Deref(got.Observed))
		}
		return got
	}

	// Two takes at once.
	sh(t, b, g, "printf 'one' > /root/state && sync")
	var wg sync.WaitGroup
	ops := make([]*snapshots.Operation, 2)
	sns := make([]*snapshots.Snapshot, 2)
	for i, memory := range []bool{true, false} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			op, sn, err := env.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: box.Name, Memory: memory})
			if err != nil {
				t.Errorf("take %d: %v", i, err)
				return
			}
			ops[i], sns[i] = op, sn
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for i := range ops {
		ops[i] = ready(ops[i], "a take of two at once")
	}
	if first, second := order(ops[0], ops[1]); second.StartedAt.Before(*first.EndedAt) {
		t.Fatalf("a take started at %v, before the one before it ended at %v", second.StartedAt, first.EndedAt)
	}
	for i := range sns {
		sn, _, err := env.Core.Snapshot(ctx, snapshots.Owner(), sns[i].ID)
		if err != nil || sn.State != snapshots.StateReady {
			t.Fatalf("a take of two at once: %+v %v", sn, err)
		}
		if got := holds(sn); got != "one" {
			t.Fatalf("%s holds %q, want the guest's %q", sn.Name, got, "one")
		}
		sns[i] = sn
	}
	if sns[0].Name == sns[1].Name {
		t.Fatalf("two takes at once share the name %q", sns[0].Name)
	}
	target := sns[0] // with the guest's memory: its restore needs no boot

	// A take and a restore asked at once.
	sh(t, b, g, "printf 'two' > /root/state && sync")
	top, mid, err := env.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: box.Name, Name: "between"})
	if err != nil {
		t.Fatal(err)
	}
	rop, err := env.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: box.Name, Snapshot: target.ID})
	if err != nil {
		t.Fatal(err)
	}
	top, rop = ready(top, "the take asked with a restore"), ready(rop, "the restore asked with a take")
	if rop.StartedAt.Before(*top.EndedAt) {
		t.Fatal("the restore started before the take ended")
	}
	if mid, _, err = env.Core.Snapshot(ctx, snapshots.Owner(), mid.ID); err != nil {
		t.Fatal(err)
	}
	if got := holds(mid); got != "two" {
		t.Fatalf("the take asked with the restore holds %q, want %q", got, "two")
	}
	if got := state(); got != "one" {
		t.Fatalf("after the restore the guest holds %q, want the target's %q", got, "one")
	}

	// A restore under way refuses the delete of its target.
	reached, release := h.arm(t, "restore:rollback")
	rop, err = env.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: box.Name, Snapshot: mid.ID})
	if err != nil {
		t.Fatal(err)
	}
	waitReached(t, reached)
	_, err = env.Keeps.Delete(ctx, snapshots.Owner(), snapshots.DeleteRequest{Box: box.Name, Snapshot: mid.ID})
	coretest.RefusedWith(t, err, "‘"+mid.Name+"’ is in use: the restore at")
	release()
	ready(rop, "the restore held at its rollback")
	if got := state(); got != "two" {
		t.Fatalf("after the restore held at its rollback the guest holds %q, want %q", got, "two")
	}

	// A delete under way refuses a restore to what it deletes.
	reached, release = h.arm(t, "delete:prepared")
	dop, err := env.Keeps.Delete(ctx, snapshots.Owner(), snapshots.DeleteRequest{Box: box.Name, Snapshot: sns[1].ID})
	if err != nil {
		t.Fatal(err)
	}
	waitReached(t, reached)
	_, err = env.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: box.Name, Snapshot: sns[1].ID})
	coretest.RefusedWith(t, err, "‘"+sns[1].Name+"’ is in use: it is being deleted")
	release()
	ready(dop, "the delete held before libvirt's")
	if held, err := b.HeldSnapshots(ctx); err != nil {
		t.Fatal(err)
	} else {
		for _, hs := range held {
			if hs.Label.Snapshot == sns[1].ID {
				t.Fatalf("libvirt still holds the deleted %s", sns[1].Name)
			}
		}
	}

	// A repeated request is the same operation, with one undo.
	undosBefore := undoIDs(t, env, box.Name)
	req := snapshots.RestoreRequest{Box: box.Name, Snapshot: target.ID, RequestID: "req-1"}
	op1, err := env.Restores.Restore(ctx, snapshots.Owner(), req)
	if err != nil {
		t.Fatal(err)
	}
	op2, err := env.Restores.Restore(ctx, snapshots.Owner(), req)
	if err != nil || op2.ID != op1.ID {
		t.Fatalf("the repeated request: %+v %v; want the first's operation %s", op2, err, op1.ID)
	}
	op1 = ready(op1, "the repeated restore")
	var added []string
	for id := range undoIDs(t, env, box.Name) {
		if !undosBefore[id] {
			added = append(added, id)
		}
	}
	if len(added) != 1 || op1.UndoID == nil || added[0] != *op1.UndoID {
		t.Fatalf("a repeated restore took the undos %v, want its one undo", added)
	}
	if got := state(); got != "one" {
		t.Fatalf("after the repeated restore the guest holds %q, want %q", got, "one")
	}
}

// undoIDs is the set of the box's undos.
func undoIDs(t *testing.T, env *coretest.Env, box string) map[string]bool {
	t.Helper()
	list, err := env.Core.List(context.Background(), snapshots.Owner(), snapshots.ListQuery{Box: box})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, s := range list[0].Snapshots {
		if s.IsUndo() {
			out[s.ID] = true
		}
	}
	return out
}

// order answers two operations, the one that started first first.
func order(a, b *snapshots.Operation) (*snapshots.Operation, *snapshots.Operation) {
	if a.StartedAt.Before(*b.StartedAt) {
		return a, b
	}
	return b, a
}
