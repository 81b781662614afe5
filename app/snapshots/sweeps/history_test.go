package sweeps_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/sweeps"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local"
)

// historyBox makes the person's box and starts it, so its change journal
// runs, and answers a function that writes a file in it.
func historyBox(t *testing.T, e *coretest.Env, name string) (*snapshots.Box, func(file, text string)) {
	t.Helper()
	b := e.Box(t, snapshots.Owner(), name)
	g := providers.Guest{Backend: "local", Kind: b.Kind, Ref: b.GuestRef}
	if err := e.Local.Start(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	dir := e.Local.BoxDir(g)
	return b, func(file, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// check runs the automatic check and waits for what it took.
func check(t *testing.T, e *coretest.Env) sweeps.AutomaticReport {
	t.Helper()
	rep, err := e.Sweeps.CheckAutomatic(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range rep.Ops {
		if got := e.Wait(t, &snapshots.Operation{ID: id}); got.State != snapshots.OpDone {
			t.Fatalf("automatic take %s: %s", got.State, coretest.Deref(got.Error))
		}
	}
	return rep
}

func automaticOf(t *testing.T, e *coretest.Env, box string) []*snapshots.Snapshot {
	t.Helper()
	yes := true
	list, err := e.Core.List(context.Background(), snapshots.Owner(), snapshots.ListQuery{Box: box, Automatic: &yes})
	if err != nil {
		t.Fatal(err)
	}
	return list[0].Snapshots
}

// TestAutomaticOnlyWhenChanged: the automatic check takes a snapshot of a
// running box only if it changed since the last one, reading no folder when
// its change journal answers; one more when the box stops; none while it is
// stopped or with automatic snapshots off for it. Automatic snapshots are
// labelled automatic, taken by boxsnap, never undos, and not counted in the
// per-box limit of 5.
func TestAutomaticOnlyWhenChanged(t *testing.T) {
	t.Parallel()
	// Each check comes a cadence (15 s) after the one before.
	var clock atomic.Int64
	clock.Store(time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC).UnixNano())
	e := coretest.New(t, coretest.Options{Now: func() time.Time { return time.Unix(0, clock.Load()).UTC() }})
	check := func(t *testing.T, e *coretest.Env) sweeps.AutomaticReport {
		t.Helper()
		clock.Add(int64(15 * time.Second))
		return check(t, e)
	}
	ctx := context.Background()
	b, write := historyBox(t, e, "amber-fox")
	write("notes.txt", "one")

	if rep := check(t, e); len(rep.Taken) != 1 {
		t.Fatalf("the first check of a box with no snapshot took %d, want 1", len(rep.Taken))
	}
	for i := range 3 {
		if rep := check(t, e); len(rep.Taken) != 0 || rep.Walked != 0 || rep.Checked != 1 {
			t.Fatalf("check %d of an unchanged box: %+v, want it checked, nothing taken, no folder read", i, rep)
		}
	}
	write("notes.txt", "two")
	if rep := check(t, e); len(rep.Taken) != 1 || rep.Walked != 0 {
		t.Fatalf("a check after a change: %+v, want one taken from the journal", rep)
	}
	if rep := check(t, e); len(rep.Taken) != 0 {
		t.Fatalf("a second check after one change took %d", len(rep.Taken))
	}
	auto := automaticOf(t, e, b.Name)
	if len(auto) != 2 {
		t.Fatalf("%d automatic snapshots, want 2", len(auto))
	}
	for _, sn := range auto {
		if !sn.Automatic || sn.ByKind != "boxsnap" || sn.UndoOf != nil || sn.State != snapshots.StateReady {
			t.Fatalf("automatic snapshot %+v: want automatic, by boxsnap, no undo, ready", sn)
		}
	}
	op, _, err := e.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: b.Name, Name: "the person's"})
	if err != nil {
		t.Fatal(err)
	}
	op = e.Wait(t, op)
	var res take.TakeResult
	if err := jsonOf(op.Result, &res); err != nil || res.Count != 1 || res.Limit != 5 {
		t.Fatalf("the person's take beside 2 automatic ones counts %d of %d (%v), want 1 of 5", res.Count, res.Limit, err)
	}

	// The box stops after a change: one more; then none while it is stopped.
	write("notes.txt", "three")
	if err := e.Local.Stop(ctx, providers.Guest{Backend: "local", Kind: b.Kind, Ref: b.GuestRef}); err != nil {
		t.Fatal(err)
	}
	if rep := check(t, e); len(rep.Taken) != 1 {
		t.Fatalf("the check after the box stopped took %d, want one more", len(rep.Taken))
	}
	if rep := check(t, e); len(rep.Taken) != 0 {
		t.Fatalf("a check of a stopped box took %d", len(rep.Taken))
	}

	// Off for this box: a change takes nothing.
	if err := e.Local.Start(ctx, providers.Guest{Backend: "local", Kind: b.Kind, Ref: b.GuestRef}); err != nil {
		t.Fatal(err)
	}
	off := false
	if _, err := e.Boxes.SetBoxHistory(ctx, snapshots.Owner(), b.Name, &off, nil); err != nil {
		t.Fatal(err)
	}
	write("notes.txt", "four")
	if rep := check(t, e); len(rep.Taken) != 0 || rep.Checked != 0 {
		t.Fatalf("with automatic snapshots off the check did %+v", rep)
	}
	if _, err := e.Boxes.SetBoxHistory(ctx, snapshots.Agent("thabc"), b.Name, nil, nil); err == nil {
		t.Fatal("an agent changed a box's history settings")
	}
}

// blockRestore holds a restore at its stop step until released.
type blockRestore struct {
	providers.Backend
	once    sync.Once
	armed   atomic.Bool
	reached chan struct{}
	release chan struct{}
}

func (b *blockRestore) RestoreSnapshot(ctx context.Context, g providers.Guest, ref providers.SnapshotRef, step providers.RestoreStep, rec providers.Recorder) (providers.RestoreProgress, error) {
	if b.armed.Load() {
		b.once.Do(func() { close(b.reached) })
		<-b.release
	}
	return b.Backend.RestoreSnapshot(ctx, g, ref, step, rec)
}

// TestThinningSparesWhatIsUsed: six automatic snapshots in one minute,
// thinned half an hour later, when the tier keeps one of that minute:
// thinning deletes only the one nothing uses, and spares the minute's
// first, a saved one, a kept one, the restore's target the box's files
// descend from, and the target of a restore that is running; a second
// thinning before the first ends admits nothing more.
func TestThinningSparesWhatIsUsed(t *testing.T) {
	t.Parallel()
	var clock atomic.Int64
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	clock.Store(t0.UnixNano())
	block := &blockRestore{reached: make(chan struct{}), release: make(chan struct{})}
	e := coretest.New(t, coretest.Options{
		Now: func() time.Time { return time.Unix(0, clock.Load()).UTC() },
		Wrap: func(b snapshots.Backend) snapshots.Backend {
			block.Backend = b.Snap
			b.Snap = block
			return b
		},
	})
	ctx := context.Background()
	owner := snapshots.Owner()
	b, write := historyBox(t, e, "amber-fox")
	var ids []string
	for i, name := range []string{"a", "b", "c", "d", "e", "f"} {
		// Six in a minute is more than the check's cadence takes: they
		// are admitted as the check admits one.
		clock.Store(t0.Add(time.Duration(i) * 5 * time.Second).UnixNano())
		write("notes.txt", name)
		op, sn, err := e.Take.TakeAutomatic(ctx, b.ID, "the box changed")
		if err != nil {
			t.Fatalf("change %s: %v", name, err)
		}
		if got := e.Wait(t, op); got.State != snapshots.OpDone {
			t.Fatalf("automatic take %s: %s", got.State, coretest.Deref(got.Error))
		}
		ids = append(ids, sn.ID)
	}
	if _, err := e.Keeps.Save(ctx, owner, b.Name, ids[1], ""); err != nil {
		t.Fatalf("Save: %v", err)
	}
	kop, err := e.Keeps.Keep(ctx, owner, snapshots.KeepRequest{Box: b.Name, Snapshot: ids[3], Days: 30})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Wait(t, kop); got.State != snapshots.OpDone {
		t.Fatalf("keep: %s", coretest.Deref(got.Error))
	}
	rop, err := e.Restores.Restore(ctx, owner, snapshots.RestoreRequest{Box: b.Name, Snapshot: ids[2], Replace: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Wait(t, rop); got.State != snapshots.OpDone {
		t.Fatalf("restore: %s", coretest.Deref(got.Error))
	}
	block.armed.Store(true)
	rop, err = e.Restores.Restore(ctx, owner, snapshots.RestoreRequest{Box: b.Name, Snapshot: ids[4], Replace: true, NoUndo: true})
	if err != nil {
		t.Fatal(err)
	}
	<-block.reached

	clock.Store(t0.Add(30 * time.Minute).UnixNano())
	rep, err := e.Sweeps.ThinHistory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Operations != 1 || rep.Snapshots != 1 {
		t.Fatalf("thinning admitted %+v, want one operation deleting one snapshot", rep)
	}
	again, err := e.Sweeps.ThinHistory(ctx)
	if err != nil || again.Operations != 0 {
		t.Fatalf("a second thinning before the first ended admitted %+v (%v), want nothing", again, err)
	}
	close(block.release)
	if got := e.Wait(t, rop); got.State != snapshots.OpDone {
		t.Fatalf("restore: %s", coretest.Deref(got.Error))
	}
	waitIdle(t, e, b.ID)

	var left []string
	list, err := e.Core.List(ctx, owner, snapshots.ListQuery{Box: b.Name})
	if err != nil {
		t.Fatal(err)
	}
	for _, sn := range list[0].Snapshots {
		left = append(left, sn.ID)
	}
	for i, id := range ids {
		if got, want := slices.Contains(left, id), i != 5; got != want {
			t.Errorf("snapshot %d (%s) present %v after thinning, want %v", i, id, got, want)
		}
	}
}

// waitIdle waits until the box has no operation running or waiting.
func waitIdle(t *testing.T, e *coretest.Env, box string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		var id string
		err := e.Pool.QueryRow(ctx, `SELECT id FROM operations WHERE box_id = $1 AND state = 'running' ORDER BY seq LIMIT 1`, box).Scan(&id)
		if err != nil {
			return // none
		}
		if _, err := e.Core.Wait(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAutomaticAtItsCadence: the automatic job's interval is only how often
// boxsnap looks. With the job looking every second and the local backend's
// cadence of 15 seconds, a box that changes every second gets at most one
// automatic snapshot per 15 seconds, and one each cadence; a box that does
// not change is asked about once per cadence, not at every look.
func TestAutomaticAtItsCadence(t *testing.T) {
	t.Parallel()
	var clock atomic.Int64
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	clock.Store(t0.UnixNano())
	e := coretest.New(t, coretest.Options{Now: func() time.Time { return time.Unix(0, clock.Load()).UTC() }})
	b, write := historyBox(t, e, "amber-fox")
	_, _ = historyBox(t, e, "still-owl")
	const cadence = 15 * time.Second
	asked := 0
	for sec := range 61 {
		clock.Store(t0.Add(time.Duration(sec) * time.Second).UnixNano())
		write("notes.txt", fmt.Sprint("second ", sec))
		asked += check(t, e).Checked
	}
	auto := automaticOf(t, e, b.Name)
	slices.SortFunc(auto, func(x, y *snapshots.Snapshot) int { return x.TakenAt.Compare(y.TakenAt) })
	if len(auto) != 5 {
		t.Errorf("a box changed every second for 60 s, looked at every second with a %s cadence, got %d automatic snapshots, want 5 (at 0, 15, 30, 45, 60 s)", cadence, len(auto))
	}
	for i := 1; i < len(auto); i++ {
		if gap := auto[i].TakenAt.Sub(auto[i-1].TakenAt); gap < cadence {
			t.Errorf("automatic %s and %s only %s apart; the cadence is %s", auto[i-1].Name, auto[i].Name, gap, cadence)
		}
	}
	// Two boxes, each asked at 0, 15, 30, 45 and 60 s.
	if asked != 10 {
		t.Errorf("61 looks asked boxes %d times, want 10 (two boxes, once per cadence each)", asked)
	}
}

// TestNoAutomaticOnUnchangedBoxAfterRestart: a box that stopped while no
// boxsnap process watched it (boxsnap restarted, or its process ended with
// the worker that owned it) gets no automatic snapshot when it did not
// change: the local backend compares its folder with the last take's
// manifest rather than answer unknown. One that changed gets its one more.
func TestNoAutomaticOnUnchangedBoxAfterRestart(t *testing.T) {
	t.Parallel()
	var clock atomic.Int64
	clock.Store(time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC).UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()).UTC() }
	root := t.TempDir()
	if err := local.Passable(root, os.TempDir()); err != nil {
		t.Fatal(err)
	}
	e := coretest.New(t, coretest.Options{Now: now, LocalRoot: root})
	ctx := context.Background()
	still, writeStill := historyBox(t, e, "still-owl")
	moved, writeMoved := historyBox(t, e, "amber-fox")
	writeStill("notes.txt", "one")
	writeMoved("notes.txt", "one")
	if rep := check(t, e); len(rep.Taken) != 2 {
		t.Fatalf("the first check took %d, want 2", len(rep.Taken))
	}
	// Both stop in this process after amber-fox changed; then another
	// boxsnap process on the same database and folder, which watched
	// neither stop, checks them.
	writeMoved("notes.txt", "two")
	for _, b := range []*snapshots.Box{still, moved} {
		if err := e.Local.Stop(ctx, providers.Guest{Backend: "local", Kind: b.Kind, Ref: b.GuestRef}); err != nil {
			t.Fatal(err)
		}
	}
	other, err := coretest.Build(ctx, e.Pool, coretest.Options{Now: now, LocalRoot: root, Install: e.Install})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Stop)
	clock.Add(int64(15 * time.Second))
	check(t, other)
	if n := len(automaticOf(t, e, still.Name)); n != 1 {
		t.Errorf("still-owl never changed, yet has %d automatic snapshots after it stopped unwatched, want 1", n)
	}
	if n := len(automaticOf(t, e, moved.Name)); n != 2 {
		t.Errorf("amber-fox changed before it stopped unwatched and has %d automatic snapshots, want 2 (one more as it stopped)", n)
	}
}
