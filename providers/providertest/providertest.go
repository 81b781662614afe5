package providertest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// Harness is what a backend gives the suite: fresh backends, guests with some
// state, and a way to change and read that state.
type Harness struct {
	// Kind is the kind of box the suite makes, such as "linux" or "lxc".
	Kind string
	// Install is the install ID written on labels.
	Install string
	// New gives a fresh backend for one test, with its Boxes.
	New func(t *testing.T) (providers.Backend, providers.Boxes)
	// NewGuest makes a guest whose snapshots are fork-safe (its image has the
	// identity reset), holding some state. id is a fresh box ID.
	NewGuest func(t *testing.T, b providers.Backend, boxes providers.Boxes, id string) providers.Guest
	// WriteState changes the guest's state to state; ReadState reads it.
	WriteState func(t *testing.T, b providers.Backend, g providers.Guest, state string)
	ReadState  func(t *testing.T, b providers.Backend, g providers.Guest) string
	// Unreachable, when set, gives a backend whose host does not answer: the
	// suite checks Snapshotting still answers, with no I/O.
	Unreachable func(t *testing.T) providers.Backend
}

// Run runs the provider contract's tests against the harness's backend.
func Run(t *testing.T, h Harness) {
	t.Run("SnapshottingWithNoIO", func(t *testing.T) { t.Parallel(); testSnapshotting(t, h) })
	t.Run("PlanThenTake", func(t *testing.T) { t.Parallel(); testPlanThenTake(t, h) })
	t.Run("LabelsRoundTrip", func(t *testing.T) { t.Parallel(); testLabels(t, h) })
	t.Run("RestoreOrderBringsBackTheState", func(t *testing.T) { t.Parallel(); testRestore(t, h) })
	t.Run("DeleteThenHeldLacksItAndDeleteTwiceSucceeds", func(t *testing.T) { t.Parallel(); testDelete(t, h) })
	t.Run("ForkGivesADistinctGuest", func(t *testing.T) { t.Parallel(); testFork(t, h) })
	t.Run("ChangesNeverSaysNoAfterAChange", func(t *testing.T) { t.Parallel(); testChanges(t, h) })
	t.Run("TakeAlreadyPublishedIsDone", func(t *testing.T) { t.Parallel(); testTakeAgain(t, h) })
}

// NewID gives an ID in boxsnap's form: prefix and 12 letters and digits.
func NewID(prefix string) string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	var p [12]byte
	_, _ = rand.Read(p[:])
	out := []byte(prefix)
	for _, c := range p {
		out = append(out, letters[int(c)%len(letters)])
	}
	return string(out)
}

type fixture struct {
	b     providers.Backend
	boxes providers.Boxes
	guest providers.Guest
	box   string
}

func setup(t *testing.T, h Harness) fixture {
	t.Helper()
	b, boxes := h.New(t)
	box := NewID("bx")
	g := h.NewGuest(t, b, boxes, box)
	return fixture{b: b, boxes: boxes, guest: g, box: box}
}

func (f fixture) take(t *testing.T, h Harness) (providers.SnapshotTaken, string) {
	t.Helper()
	id := NewID("sn")
	taken, err := f.b.Snapshot(context.Background(), f.guest, providers.SnapshotTake{
		Label: providers.Label{Install: h.Install, Box: f.box, Snapshot: id},
	}, nil)
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	if taken.Ref == "" {
		t.Fatal("Snapshot answered no backend reference")
	}
	return taken, id
}

func (f fixture) ref(id string, taken providers.SnapshotTaken) providers.SnapshotRef {
	return providers.SnapshotRef{ID: id, Ref: taken.Ref, Guest: f.guest, Storage: taken.Storage}
}

func held(t *testing.T, b providers.Backend, id string) (providers.HeldSnapshot, bool) {
	t.Helper()
	list, err := b.HeldSnapshots(context.Background())
	if err != nil {
		t.Fatalf("HeldSnapshots: %v", err)
	}
	for _, s := range list {
		if s.Label.Snapshot == id {
			return s, true
		}
	}
	return providers.HeldSnapshot{}, false
}

func checkSnapshotting(t *testing.T, s *providers.Snapshotting) {
	t.Helper()
	if s == nil {
		t.Fatal("Snapshotting gave nil for the harness's kind: it takes no snapshots")
	}
	if !slices.Contains([]providers.Scope{providers.ScopeBox, providers.ScopeDevice}, s.Scope) {
		t.Errorf("scope %q is neither box nor device", s.Scope)
	}
	if len(s.Holds) == 0 {
		t.Error("holds is empty")
	}
	if !slices.Contains([]providers.WhileRunning{providers.WhileRunningLive, providers.WhileRunningPauses, providers.WhileRunningSuspends, providers.WhileRunningStoppedOnly}, s.WhileRunning) {
		t.Errorf("whileRunning %q is not one of the kinds providers declares", s.WhileRunning)
	}
	if !slices.Contains([]providers.RestoreKind{providers.RestoreInPlace, providers.RestoreNewGuest, providers.RestoreNone}, s.Restore) {
		t.Errorf("restore %q is not one of the kinds providers declares", s.Restore)
	}
	if !slices.Contains([]providers.KeepsPastRelease{providers.KeepsAsIs, providers.KeepsHeldCopy, providers.KeepsNo}, s.KeepsPastRelease) {
		t.Errorf("keepsPastRelease %q is not one of the kinds providers declares", s.KeepsPastRelease)
	}
	if s.Price != nil && s.Price.Known && s.Price.Currency == "" {
		t.Error("a known price has no currency")
	}
}

func testSnapshotting(t *testing.T, h Harness) {
	b, _ := h.New(t)
	checkSnapshotting(t, b.Snapshotting(h.Kind))
	if h.Unreachable != nil {
		// With its host gone, the answer is the same: Snapshotting does no I/O.
		u := h.Unreachable(t)
		got, want := u.Snapshotting(h.Kind), b.Snapshotting(h.Kind)
		checkSnapshotting(t, got)
		if got.Scope != want.Scope || got.WhileRunning != want.WhileRunning || got.Restore != want.Restore || got.Fork != want.Fork {
			t.Errorf("Snapshotting with the host unreachable = %+v, want %+v", got, want)
		}
	}
}

func testPlanThenTake(t *testing.T, h Harness) {
	f := setup(t, h)
	ctx := context.Background()
	plan, err := f.b.PlanSnapshots(ctx, f.guest, nil)
	if err != nil {
		t.Fatalf("PlanSnapshots: %v", err)
	}
	if !plan.Take.OK {
		t.Fatalf("the plan refuses a take of a fresh guest: %s", plan.Take.Why)
	}
	if plan.Take.About <= 0 {
		t.Errorf("the plan says a take takes %v; a time must be given", plan.Take.About)
	}
	before := time.Now().Add(-time.Minute)
	taken, _ := f.take(t, h)
	if taken.CapturedAt.Before(before) {
		t.Errorf("capturedAt %v is not the moment of the take", taken.CapturedAt)
	}
	if taken.Holds == "" {
		t.Error("the take says nothing of what it holds")
	}
}

func testLabels(t *testing.T, h Harness) {
	f := setup(t, h)
	ctx := context.Background()
	taken, id := f.take(t, h)
	s, ok := held(t, f.b, id)
	if !ok {
		t.Fatalf("HeldSnapshots lacks snapshot %s just taken", id)
	}
	if s.Incomplete {
		t.Fatalf("a snapshot just taken is listed incomplete: %s", s.Error)
	}
	if s.Label.Install != h.Install || s.Label.Box != f.box || s.Label.Snapshot != id {
		t.Errorf("label = %+v, want install %s, box %s, snapshot %s", s.Label, h.Install, f.box, id)
	}
	if s.Label.ResetVersion != taken.ResetVersion {
		t.Errorf("label's reset version %d, the take said %d", s.Label.ResetVersion, taken.ResetVersion)
	}
	if s.Ref.Ref != taken.Ref {
		t.Errorf("listed with reference %q, taken as %q", s.Ref.Ref, taken.Ref)
	}
	if l, ok := f.b.(providers.Labeler); ok {
		until := time.Date(2031, 3, 4, 23, 59, 59, 0, time.UTC)
		if err := l.SetKeptUntil(ctx, f.ref(id, taken), &until); err != nil {
			t.Fatalf("SetKeptUntil: %v", err)
		}
		s, _ = held(t, f.b, id)
		if s.Label.KeptUntil == nil || !s.Label.KeptUntil.Equal(until) {
			t.Errorf("after SetKeptUntil the label's keep date is %v, want %v", s.Label.KeptUntil, until)
		}
		if err := l.SetKeptUntil(ctx, f.ref(id, taken), nil); err != nil {
			t.Fatalf("SetKeptUntil(nil): %v", err)
		}
		s, _ = held(t, f.b, id)
		if s.Label.KeptUntil != nil {
			t.Errorf("after SetKeptUntil(nil) the label is still kept until %v", s.Label.KeptUntil)
		}
	}
}

func testRestore(t *testing.T, h Harness) {
	f := setup(t, h)
	ctx := context.Background()
	h.WriteState(t, f.b, f.guest, "before the migration")
	taken, id := f.take(t, h)
	h.WriteState(t, f.b, f.guest, "after the migration")
	ref := f.ref(id, taken)
	// A plan of the box alone says how its restores go: Settings' row of
	// the backend reads it ("restores any", never "no restores").
	if plan, err := f.b.PlanSnapshots(ctx, f.guest, nil); err != nil || plan.Restore.Way == providers.WayNone {
		t.Errorf("the box's plan with no snapshot named says no restore (%v): %+v", err, plan.Restore)
	}
	plan, err := f.b.PlanSnapshots(ctx, f.guest, &ref)
	if err != nil {
		t.Fatalf("PlanSnapshots: %v", err)
	}
	if plan.Restore.Way == providers.WayNone {
		t.Fatalf("the plan refuses the restore: %s", plan.Restore.Why)
	}
	if len(plan.Restore.Order) == 0 || !slices.Contains(plan.Restore.Order, providers.StepRollback) && plan.Restore.Way == providers.WayRollback {
		t.Fatalf("the plan's order %v has no rollback", plan.Restore.Order)
	}
	var undo providers.SnapshotRef
	for _, step := range plan.Restore.Order {
		if step == providers.StepUndo {
			uid := NewID("sn")
			ut, err := f.b.Snapshot(ctx, f.guest, providers.SnapshotTake{Label: providers.Label{Install: h.Install, Box: f.box, Snapshot: uid}}, nil)
			if err != nil {
				t.Fatalf("the undo's take: %v", err)
			}
			undo = f.ref(uid, ut)
			continue
		}
		if step == providers.StepAccess {
			continue // the core's own step (a Straightener's SetStraight)
		}
		if _, err := f.b.RestoreSnapshot(ctx, f.guest, ref, step, nil); err != nil {
			t.Fatalf("restore step %s: %v", step, err)
		}
	}
	if got := h.ReadState(t, f.b, f.guest); got != "before the migration" {
		t.Fatalf("after the restore the state is %q, want %q", got, "before the migration")
	}
	if undo.Ref == "" {
		return
	}
	// The undo holds what the restore replaced.
	for _, step := range plan.Restore.Order {
		if step == providers.StepUndo || step == providers.StepAccess {
			continue // the core's own steps
		}
		if _, err := f.b.RestoreSnapshot(ctx, f.guest, undo, step, nil); err != nil {
			t.Fatalf("undo step %s: %v", step, err)
		}
	}
	if got := h.ReadState(t, f.b, f.guest); got != "after the migration" {
		t.Fatalf("after the undo the state is %q, want %q", got, "after the migration")
	}
}

func testDelete(t *testing.T, h Harness) {
	f := setup(t, h)
	ctx := context.Background()
	taken, id := f.take(t, h)
	ref := f.ref(id, taken)
	if err := f.b.DeleteSnapshot(ctx, ref, nil); err != nil {
		t.Fatalf("DeleteSnapshot: %v", err)
	}
	if _, ok := held(t, f.b, id); ok {
		t.Fatalf("HeldSnapshots still lists snapshot %s after its delete", id)
	}
	if err := f.b.DeleteSnapshot(ctx, ref, nil); err != nil {
		t.Fatalf("deleting a snapshot already gone must succeed, got %v", err)
	}
}

// testTakeAgain: a take asked again with its snapshot's ID, as a step cut
// short after the backend published retries, answers the snapshot it took,
// once, and restores it.
func testTakeAgain(t *testing.T, h Harness) {
	f := setup(t, h)
	ctx := context.Background()
	h.WriteState(t, f.b, f.guest, "taken once")
	first, id := f.take(t, h)
	again, err := f.b.Snapshot(ctx, f.guest, providers.SnapshotTake{
		Label: providers.Label{Install: h.Install, Box: f.box, Snapshot: id},
	}, nil)
	if err != nil {
		t.Fatalf("taking snapshot %s again answered %v, want what its take answered", id, err)
	}
	if again.Ref != first.Ref || again.Storage != first.Storage {
		t.Fatalf("taking snapshot %s again answered %s on %s, want %s on %s", id, again.Ref, again.Storage, first.Ref, first.Storage)
	}
	n := 0
	list, err := f.b.HeldSnapshots(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		if s.Label.Snapshot == id {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("after taking snapshot %s again the backend holds %d of it, want 1", id, n)
	}
	h.WriteState(t, f.b, f.guest, "changed after")
	ref := f.ref(id, again)
	plan, err := f.b.PlanSnapshots(ctx, f.guest, &ref)
	if err != nil {
		t.Fatalf("PlanSnapshots: %v", err)
	}
	for _, step := range plan.Restore.Order {
		if step == providers.StepUndo || step == providers.StepAccess {
			continue // the core's own steps
		}
		if _, err := f.b.RestoreSnapshot(ctx, f.guest, ref, step, nil); err != nil {
			t.Fatalf("restore step %s of the snapshot taken again: %v", step, err)
		}
	}
	if got := h.ReadState(t, f.b, f.guest); got != "taken once" {
		t.Fatalf("after the restore the state is %q, want %q", got, "taken once")
	}
}

func testFork(t *testing.T, h Harness) {
	f := setup(t, h)
	ctx := context.Background()
	h.WriteState(t, f.b, f.guest, "forked state")
	taken, id := f.take(t, h)
	h.WriteState(t, f.b, f.guest, "source moved on")
	forkID := NewID("bx")
	fg, err := f.b.ForkSnapshot(ctx, f.ref(id, taken), providers.BoxIdentity{ID: forkID, Name: "fork", Kind: h.Kind, Install: h.Install}, nil)
	if err != nil {
		var re *providers.RefusedError
		if errors.As(err, &re) {
			t.Fatalf("the fork was refused: %s", re.Why)
		}
		t.Fatalf("ForkSnapshot: %v", err)
	}
	if fg.Ref == "" || fg.Ref == f.guest.Ref {
		t.Fatalf("the fork's guest %q is not distinct from its source's %q", fg.Ref, f.guest.Ref)
	}
	if got := h.ReadState(t, f.b, fg); got != "forked state" {
		t.Fatalf("the fork holds %q, want the snapshot's %q", got, "forked state")
	}
	h.WriteState(t, f.b, fg, "the fork's own")
	if got := h.ReadState(t, f.b, f.guest); got != "source moved on" {
		t.Fatalf("changing the fork changed its source: %q", got)
	}
	if err := f.boxes.Release(ctx, fg); err != nil {
		t.Fatalf("release the fork: %v", err)
	}
}

// testChanges checks the automatic snapshots' question: Changes agrees with
// Status on whether the guest runs, never answers "no" once the guest's state
// changed after its last take, and never answers "yes" right after a take
// with nothing changed; a released guest does not exist. Its cadence is
// positive and needs no I/O.
func testChanges(t *testing.T, h Harness) {
	ctx := context.Background()
	f := setup(t, h)
	if c := f.b.ChangeCadence(); c.Every <= 0 || c.Why == "" {
		t.Errorf("ChangeCadence = %+v: want a positive interval and its why", c)
	}
	for round, start := range []bool{false, true} {
		if start {
			if err := f.boxes.Start(ctx, f.guest); err != nil {
				t.Fatalf("Start: %v", err)
			}
		}
		st, err := f.boxes.Status(ctx, f.guest)
		if err != nil {
			t.Fatalf("Status: %v", err)
		}
		f.take(t, h)
		ch, err := f.b.Changes(ctx, f.guest)
		if err != nil {
			t.Fatalf("round %d: Changes after a take: %v", round, err)
		}
		if !ch.Exists || ch.Running != st.Running {
			t.Errorf("round %d: Changes = %+v, want it to exist and running %v as Status says", round, ch, st.Running)
		}
		if ch.Changed == providers.ChangedYes {
			t.Errorf("round %d: Changes right after a take with nothing changed = yes (%s)", round, ch.Why)
		}
		if !slices.Contains([]providers.Changed{providers.ChangedYes, providers.ChangedNo, providers.ChangedUnknown}, ch.Changed) {
			t.Errorf("round %d: Changes = %q, not one of yes, no, unknown", round, ch.Changed)
		}
		h.WriteState(t, f.b, f.guest, fmt.Sprintf("changed in round %d", round))
		ch, err = f.b.Changes(ctx, f.guest)
		if err != nil {
			t.Fatalf("round %d: Changes after a change: %v", round, err)
		}
		if ch.Changed == providers.ChangedNo {
			t.Errorf("round %d: Changes after the guest's state changed = no", round)
		}
	}
	if err := f.boxes.Release(ctx, f.guest); err != nil {
		t.Fatalf("Release: %v", err)
	}
	ch, err := f.b.Changes(ctx, f.guest)
	if err != nil {
		t.Fatalf("Changes of a released guest: %v", err)
	}
	if ch.Exists {
		t.Errorf("Changes of a released guest = %+v, want it gone", ch)
	}
}
