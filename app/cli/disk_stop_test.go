package cli_test

import (
	"context"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// TestCLIListSaysADiskStop: `boxsnap snapshot list <box>` of a box at its
// disk bound (stopped there by its backend's watch, or running on with
// its writes past the bound failing) says so, under the box's heading, in
// the words the box's page and the API say.
func TestCLIListSaysADiskStop(t *testing.T) {
	t.Parallel()
	g := setup(t)
	ctx := context.Background()
	filler := snapshots.BoxTemplate{Name: "filler", Backend: g.Core.Backends()[0].ID, Kind: "linux",
		Command: `i=0; while dd if=/dev/urandom of=f$i bs=64k count=16 2>/dev/null; do i=$((i+1)); done; sleep 60`,
		Limits:  providers.BoxLimits{DiskBytes: 32 << 20}}
	if err := g.Boxes.SaveTemplate(ctx, snapshots.Owner(), filler); err != nil {
		t.Fatal(err)
	}
	b, err := g.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "full-disk", Template: "filler"})
	if err != nil {
		t.Fatal(err)
	}
	guest := providers.Guest{Ref: b.GuestRef}
	t.Cleanup(func() { _ = g.Local.Stop(context.Background(), guest) })
	if err := g.Local.Start(ctx, guest); err != nil {
		t.Fatal(err)
	}
	var st providers.GuestStatus
	for deadline := time.Now().Add(60 * time.Second); st.DiskStop == nil; {
		if st, err = g.Local.Status(ctx, guest); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the box was not stopped at its disk bound within 60 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A box that runs on at its bound may still be finishing its last
	// write: the words say what its files hold once they hold still.
	for deadline := time.Now().Add(30 * time.Second); ; {
		time.Sleep(100 * time.Millisecond)
		now, err := g.Local.Status(ctx, guest)
		if err != nil {
			t.Fatal(err)
		}
		if now.DiskStop != nil && *now.DiskStop == *st.DiskStop {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("what the box's files hold did not settle within 30 s")
		}
		st = now
	}
	out := g.ok(t, "list", "full-disk")
	says(t, out, "full-disk: ", "\n  "+snapshots.DiskStopWords("full-disk", st.DiskStop)+"\n",
		"Box full-disk reached its disk bound of 32 MiB (its files hold ")
}
