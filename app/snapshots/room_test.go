package snapshots_test

import (
	"context"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
)

// fullStorage reports the local backend's storage as nearly full, so the
// room rule bites: each take expects to add 1% of it.
type fullStorage struct {
	providers.Backend
	percent float64
}

func (f *fullStorage) PlanSnapshots(ctx context.Context, g providers.Guest, s *providers.SnapshotRef) (providers.SnapshotPlan, error) {
	p, err := f.Backend.PlanSnapshots(ctx, g, s)
	if err != nil {
		return p, err
	}
	const total = 100 << 30
	p.Storage.Name, p.Storage.PercentFull = "local", f.percent
	p.Storage.FreeBytes = int64(total * (1 - f.percent/100))
	adds := int64(total / 100)
	p.Take.AddsBytes = &adds
	p.Restore.UndoBytes = &adds
	return p, nil
}

// TestRoomReservedAtOnce: two takes on two boxes of one storage, asked while
// the first still runs, cannot both use the last of its room; a refusal for
// room says so and holds only for now.
func TestRoomReservedAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := coretest.New(t, coretest.Options{NoWorkers: true, Wrap: func(b snapshots.Backend) snapshots.Backend {
		b.Snap = &fullStorage{Backend: b.Snap, percent: 83.5}
		return b
	}})
	_, agent, _ := e.Thread(t, "Fix the sign-in flow")
	e.Box(t, agent, "amber-fox")
	e.Box(t, agent, "brisk-lake")
	first, _, err := e.Take.Take(ctx, agent, taking.TakeRequest{Box: "amber-fox"})
	if err != nil {
		t.Fatalf("the first take, to 84.5%%: %v", err)
	}
	_, _, err = e.Take.Take(ctx, agent, taking.TakeRequest{Box: "brisk-lake"})
	coretest.RefusedWith(t, err, "storage would be 86% full, past 85%")
	if r, _ := snapshots.AsRefusal(err); !r.TryAgain || r.Code != snapshots.CodeRoom {
		t.Fatalf("a room refusal holds only for now: %+v", r)
	}
	// An operation boxsnap could not confirm still holds its room: its
	// snapshot may be on the storage.
	setOpState := func(state string) {
		t.Helper()
		if _, err := e.Pool.Exec(ctx, "UPDATE operations SET state = $2 WHERE id = $1", first.ID, state); err != nil {
			t.Fatal(err)
		}
	}
	setOpState(snapshots.OpUnknown)
	_, _, err = e.Take.Take(ctx, agent, taking.TakeRequest{Box: "brisk-lake"})
	coretest.RefusedWith(t, err, "storage would be 86% full, past 85%")
	// One that ended frees it.
	setOpState(snapshots.OpFailed)
	if _, _, err := e.Take.Take(ctx, agent, taking.TakeRequest{Box: "brisk-lake"}); err != nil {
		t.Fatalf("a take after the first ended: %v", err)
	}
}
