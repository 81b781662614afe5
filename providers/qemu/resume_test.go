package qemu_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/providertest"
	"github.com/boxsnap/boxsnap/providers/qemu"
	"github.com/boxsnap/boxsnap/providers/qemu/qemutest"
)

// runStep runs one step of a restore as the core does: the undo is its
// own take, the access its SetStraight, the rest the backend's.
func runStep(t *testing.T, b *qemu.Backend, g providers.Guest, box string, ref providers.SnapshotRef, step providers.RestoreStep) {
	t.Helper()
	ctx := context.Background()
	var err error
	switch step {
	case providers.StepUndo:
		on, _ := b.Runs(ctx, g)
		_, err = b.Snapshot(ctx, g, providers.SnapshotTake{Memory: on, Label: providers.Label{Install: "intest", Box: box, Snapshot: providertest.NewID("sn")}}, nil)
	case providers.StepAccess:
		_, err = b.SetStraight(ctx, g, providers.Access{Box: providers.BoxIdentity{ID: box, Name: box, Kind: qemu.KindLinux, Install: "intest"}, Generation: 1})
	default:
		_, err = b.RestoreSnapshot(ctx, g, ref, step, nil)
	}
	if err != nil {
		t.Fatalf("restore step %s: %v", step, err)
	}
}

// TestRestoreResumesAtEachStepOnQEMU: a restore whose worker is killed at
// any step resumes by running that step again (the core records each step
// before it runs it). On real guests, each step of the memory order and of
// the disk order, run a second time after the steps before it, leaves the
// box as the snapshot holds it, running: a memory restore in the boot it
// had, a disk restore booted once more.
func TestRestoreResumesAtEachStepOnQEMU(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBackend(t)
	box := providertest.NewID("bx")
	g := newGuest(t, b, box)
	for _, memory := range []bool{true, false} {
		sh(t, b, g, "printf 'the target' > /root/state && sync")
		ref, _, _ := take(t, b, g, box, memory)
		plan, err := b.PlanSnapshots(ctx, g, &ref)
		if err != nil {
			t.Fatal(err)
		}
		order := plan.Restore.Order
		for killed := range order {
			running(t, b, g)
			sh(t, b, g, fmt.Sprintf("printf 'changed before a restore killed at %s' > /root/state && sync", order[killed]))
			boot := bootID(t, b, g)
			boots := len(qemutest.Boots(b.ConsoleLog(g)))
			for _, step := range order[:killed+1] {
				runStep(t, b, g, box, ref, step)
			}
			for _, step := range order[killed:] {
				runStep(t, b, g, box, ref, step)
			}
			if on, err := b.Runs(ctx, g); err != nil || !on {
				t.Fatalf("a restore (memory %v) killed at %s and resumed left the guest stopped (%v)", memory, order[killed], err)
			}
			if !memory {
				wctx, cancel := context.WithTimeout(ctx, bootWait)
				_, err := qemutest.WaitBoot(wctx, b.ConsoleLog(g), boots)
				cancel()
				if err != nil {
					t.Fatalf("a disk restore killed at %s and resumed: the guest's boot: %v", order[killed], err)
				}
			}
			if got := strings.TrimSpace(sh(t, b, g, "cat /root/state")); got != "the target" {
				t.Fatalf("a restore (memory %v) killed at %s and resumed left the state %q, want the snapshot's", memory, order[killed], got)
			}
			if again := bootID(t, b, g); memory && again != boot {
				// The memory came back: the boot is the snapshot's, which
				// is the one the guest had.
				t.Fatalf("a memory restore killed at %s and resumed booted the guest again", order[killed])
			}
		}
	}
}
