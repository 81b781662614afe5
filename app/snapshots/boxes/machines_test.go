package boxes_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
)

// TestTabMachinesMatchesTheList: the Machines tab's pages, read a page at a
// time in the database, hold the boxes the core's list of every box and
// snapshot gives (live ones, then released ones, each by name; none in the
// trash), each with CountOf's counts of its snapshots; and the Select
// mode's Pick reads the selected snapshots alone, with their boxes.
func TestTabMachinesMatchesTheList(t *testing.T) {
	t.Parallel()
	e := coretest.New(t, coretest.Options{NoWorkers: true})
	coretest.SeedTab(t, e, 60, 500)
	ctx := context.Background()
	if _, err := e.Pool.Exec(ctx, `UPDATE boxes SET state = 'trashed' WHERE id = 'bx000000000004'`); err != nil {
		t.Fatal(err)
	}
	list, err := e.Core.List(ctx, snapshots.Owner(), snapshots.ListQuery{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[bool][]string{}
	for _, bs := range list {
		if bs.Box.State == snapshots.BoxTrashed {
			continue
		}
		released := bs.Box.ReleasedAt != nil
		want[released] = append(want[released], bs.Box.Name+" "+bs.Box.ID+": "+snapshots.CountOf(bs.Snapshots).Words())
	}
	for _, released := range []bool{false, true} {
		slices.Sort(want[released])
		var got []string
		after, pages := "", 0
		for {
			page, err := e.Boxes.Machines(ctx, snapshots.Owner(), boxes.MachinesQuery{Released: released, After: after, Limit: 7})
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, m := range page.Boxes {
				got = append(got, m.Box.Name+" "+m.Box.ID+": "+m.Counts.Words())
			}
			if page.Next == "" {
				break
			}
			after = page.Next
		}
		if !slices.Equal(got, want[released]) || len(got) < 5 {
			t.Errorf("released %v, %d pages:\n got %q\nwant %q", released, pages, got, want[released])
		}
		if pages < 2 && len(got) > 7 {
			t.Errorf("released %v: %d boxes on %d page", released, len(got), pages)
		}
	}
	if _, err := e.Boxes.Machines(ctx, snapshots.Owner(), boxes.MachinesQuery{Limit: 7, After: "not a place"}); err == nil ||
		!strings.Contains(err.Error(), "after is not a place this listing gave") {
		t.Fatalf("a made-up cursor: %v", err)
	}
	if _, err := e.Boxes.Machines(ctx, snapshots.Agent("th000000000002"), boxes.MachinesQuery{Limit: 7}); err == nil {
		t.Fatal("an agent read the Machines tab")
	}

	ids := []string{"sn000000000003", "sn000000000010", "not-an-id", "sn999999999999"}
	picked, err := e.Tab.Pick(ctx, snapshots.Owner(), ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(picked) != 2 {
		t.Fatalf("Pick of %q gave %d", ids, len(picked))
	}
	for _, id := range ids[:2] {
		p := picked[id]
		sn, b, err := e.Core.Snapshot(ctx, snapshots.Owner(), id)
		if err != nil {
			t.Fatal(err)
		}
		if p.Snapshot == nil || p.Snapshot.Name != sn.Name || p.Box == nil || p.Box.ID != b.ID {
			t.Errorf("Pick gave %+v for %s, the core's Snapshot %s on %s", p, id, sn.Name, b.ID)
		}
	}
	// An agent picks only what it may see: none of another thread's.
	agentPicked, err := e.Tab.Pick(ctx, snapshots.Agent("th000000000002"), ids)
	if err != nil {
		t.Fatal(err)
	}
	for id, p := range agentPicked {
		if _, _, err := e.Core.Snapshot(ctx, snapshots.Agent("th000000000002"), id); err != nil {
			t.Errorf("an agent picked %s (%s), which it may not see: %v", id, p.Snapshot.Name, err)
		}
	}
}
