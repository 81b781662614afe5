package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// TestBoxStoppedAtItsDiskBoundSaysSo: a local box whose files reach its
// template's disk bound says so, and the API's box answer and the agent's
// box_snapshots say it in the same words the box's page does. Where the
// box is a file system of its own it runs on: "Box … reached its disk
// bound of 32 MiB (its files hold …): it runs on, but its writes past the
// bound fail, …"; where the watch bounds it, it is stopped: "… boxsnap
// stopped it, and its files are as it left them. …".
func TestBoxStoppedAtItsDiskBoundSaysSo(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	const bound = 32 << 20
	be := e.Core.Backends()[0].ID
	// 1 MiB files, one after another, until a write fails or the box is
	// stopped; then it waits, as a box that keeps running would.
	filler := snapshots.BoxTemplate{Name: "filler", Backend: be, Kind: "linux",
		Command: `i=0; while dd if=/dev/urandom of=f$i bs=64k count=16 2>/dev/null; do i=$((i+1)); done; sleep 60`,
		Limits:  providers.BoxLimits{DiskBytes: bound}}
	if err := e.Boxes.SaveTemplate(ctx, snapshots.Owner(), filler); err != nil {
		t.Fatal(err)
	}
	token, agent := e.agent(t, "Fill the disk")
	b, err := e.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "full-disk", Template: "filler", Thread: agent.Thread})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Local.Stop(context.Background(), providers.Guest{Ref: b.GuestRef}) })
	if err := e.Local.Start(ctx, providers.Guest{Ref: b.GuestRef}); err != nil {
		t.Fatal(err)
	}
	var stopped string
	for deadline := time.Now().Add(60 * time.Second); ; {
		a := e.call(t, "GET", "/boxes/full-disk", e.owner, nil).must(t, 200)
		if stopped = a.str("stopped"); stopped != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the box's answer says nothing of its disk bound after 60 s: %s", a.Raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
	st, err := e.Boxes.BoxStatus(ctx, snapshots.Owner(), b.ID)
	// A box that runs on at its bound may still be finishing its last
	// write: the words say what its files hold once they hold still.
	for deadline := time.Now().Add(30 * time.Second); err == nil && st.DiskStop != nil; {
		time.Sleep(100 * time.Millisecond)
		now, nerr := e.Boxes.BoxStatus(ctx, snapshots.Owner(), b.ID)
		if nerr != nil || (now.DiskStop != nil && *now.DiskStop == *st.DiskStop) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("what the box's files hold did not settle within 30 s")
		}
		st = now
	}
	stopped = e.call(t, "GET", "/boxes/full-disk", e.owner, nil).must(t, 200).str("stopped")
	exact, _, _ := e.Local.DiskBounding()
	if err != nil || st.DiskStop == nil || st.Running != exact || st.DiskStop.Full != exact {
		t.Fatalf("the box's status is %+v (%v), want at its disk bound, running on %v", st, err, exact)
	}
	want := snapshots.DiskStopWords("full-disk", st.DiskStop)
	if stopped != want {
		t.Fatalf("the API's box says %q, want %q", stopped, want)
	}
	if exact {
		contains(t, stopped, "Box full-disk reached its disk bound of 32 MiB (its files hold ", "): it runs on, but its writes past the bound fail, and its files are as they were written.",
			"Delete some of them to make room, or raise the disk bound in its template and reset the box.")
	} else {
		contains(t, stopped, "Box full-disk reached its disk bound of 32 MiB (its files hold ", "): boxsnap stopped it, and its files are as it left them.",
			"Delete some of them, or raise the disk bound in its template, then start it again.")
	}

	// The agent's box_snapshots says it of that box, in the same words.
	a := e.call(t, "POST", "/tools/box_snapshots", token, map[string]any{"box": "full-disk"}).must(t, 200)
	boxes, _ := a.JSON["boxes"].([]any)
	if len(boxes) != 1 {
		t.Fatalf("box_snapshots answered %s", a.Raw)
	}
	if got, _ := boxes[0].(map[string]any)["stopped"].(string); got != want {
		t.Fatalf("box_snapshots says %q of the box, want %q", got, want)
	}

	// A box not stopped so says nothing of it.
	e.Box(t, agent, "calm-box")
	if a := e.call(t, "GET", "/boxes/calm-box", e.owner, nil).must(t, 200); strings.Contains(string(a.Raw), `"stopped"`) {
		t.Fatalf("a box not stopped at its bound answers %s", a.Raw)
	}
}
