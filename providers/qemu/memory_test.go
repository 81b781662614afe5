package qemu_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/providertest"
	"github.com/boxsnap/boxsnap/providers/qemu"
	"github.com/boxsnap/boxsnap/providers/qemu/qemutest"
)

// counter reads the guest's counter, which its init started at boot and
// which counts each second in memory only.
func counter(t *testing.T, b *qemu.Backend, g providers.Guest) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(sh(t, b, g, "cat /tmp/counter")))
	if err != nil {
		t.Fatalf("the guest's counter: %v", err)
	}
	return n
}

// counterPast waits until the guest's counter is past n and answers it.
func counterPast(t *testing.T, b *qemu.Backend, g providers.Guest, n int) int {
	t.Helper()
	deadline := time.Now().Add(bootWait)
	for {
		if c := counter(t, b, g); c > n {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("the guest's counter did not pass %d in %v", n, bootWait)
		}
	}
}

func bootID(t *testing.T, b *qemu.Backend, g providers.Guest) string {
	t.Helper()
	return strings.TrimSpace(sh(t, b, g, "cat /proc/sys/kernel/random/boot_id"))
}

// restore runs the plan's restore of ref in its order, the undo taken and
// the access written as the core does them, and answers the steps' notes and
// how long the steps after the undo took.
func restore(t *testing.T, b *qemu.Backend, g providers.Guest, box string, ref providers.SnapshotRef) (providers.RestorePlan, []string, time.Duration) {
	t.Helper()
	return restoreWith(t, b, g, box, ref, providers.Access{Box: providers.BoxIdentity{ID: box, Name: box, Kind: qemu.KindLinux, Install: "intest"}, Generation: 1})
}

// restoreWith is restore, its access step writing a.
func restoreWith(t *testing.T, b *qemu.Backend, g providers.Guest, box string, ref providers.SnapshotRef, a providers.Access) (providers.RestorePlan, []string, time.Duration) {
	t.Helper()
	ctx := context.Background()
	plan, err := b.PlanSnapshots(ctx, g, &ref)
	if err != nil {
		t.Fatalf("PlanSnapshots: %v", err)
	}
	if plan.Restore.Way != providers.WayRollback {
		t.Fatalf("the plan restores %s by %q (%s), want a rollback in place", ref.Ref, plan.Restore.Way, plan.Restore.Why)
	}
	var notes []string
	var took time.Duration
	for _, step := range plan.Restore.Order {
		if step == providers.StepUndo {
			on, _ := b.Runs(ctx, g)
			if _, err := b.Snapshot(ctx, g, providers.SnapshotTake{Memory: on, Label: providers.Label{Install: "intest", Box: box, Snapshot: providertest.NewID("sn")}}, nil); err != nil {
				t.Fatalf("the undo: %v", err)
			}
			continue
		}
		if step == providers.StepAccess {
			if _, err := b.SetStraight(ctx, g, a); err != nil {
				t.Fatalf("the access step: %v", err)
			}
			continue
		}
		start := time.Now()
		p, err := b.RestoreSnapshot(ctx, g, ref, step, nil)
		if err != nil {
			t.Fatalf("restore step %s: %v", step, err)
		}
		took += time.Since(start)
		notes = append(notes, p.Note)
	}
	return plan.Restore, notes, took
}

func take(t *testing.T, b *qemu.Backend, g providers.Guest, box string, memory bool) (providers.SnapshotRef, providers.SnapshotTaken, time.Duration) {
	t.Helper()
	id := providertest.NewID("sn")
	start := time.Now()
	taken, err := b.Snapshot(context.Background(), g, providers.SnapshotTake{Memory: memory, Label: providers.Label{Install: "intest", Box: box, Snapshot: id}}, nil)
	if err != nil {
		t.Fatalf("Snapshot (memory %v): %v", memory, err)
	}
	return providers.SnapshotRef{ID: id, Ref: taken.Ref, Guest: g, Storage: taken.Storage}, taken, time.Since(start)
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestMemorySnapshotRestoresProcesses: a snapshot with memory, restored,
// brings the guest back running with its processes: its counter keeps
// counting from where the snapshot caught it, in the same boot; a disk
// snapshot, restored, starts the guest again, its counter from the start.
func TestMemorySnapshotRestoresProcesses(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	box := providertest.NewID("bx")
	g := newGuest(t, b, box)
	boot1 := bootID(t, b, g)
	counterPast(t, b, g, 3)

	var memTakes, memRestores, diskTakes []time.Duration
	for round := 0; round < 3; round++ {
		// The counter's log is in memory only (tmpfs): what it holds after
		// a restore is what the snapshot caught, and what came after.
		sh(t, b, g, fmt.Sprintf("echo before-take-%d >> /tmp/counts", round))
		ref, taken, took := take(t, b, g, box, true)
		memTakes = append(memTakes, took)
		if taken.Holds != providers.HoldsDiskAndMemory {
			t.Fatalf("a take with memory of a running guest holds %q, want %q", taken.Holds, providers.HoldsDiskAndMemory)
		}
		sh(t, b, g, fmt.Sprintf("echo after-take-%d >> /tmp/counts", round))
		plan, notes, took := restore(t, b, g, box, ref)
		memRestores = append(memRestores, took)
		if plan.RestartsProcesses || slices.Contains(plan.Order, providers.StepStart) {
			t.Fatalf("the plan of a memory restore says it restarts processes (%v, order %v)", plan.RestartsProcesses, plan.Order)
		}
		if !strings.Contains(strings.Join(notes, " "), "with its memory") {
			t.Errorf("the memory restore's notes %q do not say the memory came back", notes)
		}
		if id := bootID(t, b, g); id != boot1 {
			t.Fatalf("after a memory restore the guest booted again (boot %s, was %s)", id, boot1)
		}
		last := countsSince(t, sh(t, b, g, "cat /tmp/counts"), round)
		counterPast(t, b, g, last) // it keeps counting
	}
	// A disk snapshot of the running guest, restored: the guest starts
	// again, and so does its counter.
	var dref providers.SnapshotRef
	for round := 0; round < 3; round++ {
		ref, taken, took := take(t, b, g, box, false)
		diskTakes = append(diskTakes, took)
		if taken.Holds != providers.HoldsDisk {
			t.Fatalf("a take without memory holds %q, want %q", taken.Holds, providers.HoldsDisk)
		}
		if taken.Paused <= 0 {
			t.Errorf("a take of a running guest says it paused it for %v", taken.Paused)
		}
		dref = ref
	}
	sh(t, b, g, "echo after-disk-take >> /tmp/counts")
	boots := len(qemutest.Boots(b.ConsoleLog(g)))
	plan, _, diskRestore := restore(t, b, g, box, dref)
	if !plan.RestartsProcesses || !slices.Contains(plan.Order, providers.StepStart) {
		t.Fatalf("the plan of a disk restore says it keeps processes (%v, order %v)", plan.RestartsProcesses, plan.Order)
	}
	ctx, cancel := context.WithTimeout(context.Background(), bootWait)
	defer cancel()
	start := time.Now()
	boot2, err := qemutest.WaitBoot(ctx, b.ConsoleLog(g), boots)
	if err != nil {
		t.Fatal(err)
	}
	bootTook := time.Since(start)
	if boot2 == boot1 {
		t.Fatal("a disk restore did not start the guest again")
	}
	if counts := sh(t, b, g, "cat /tmp/counts"); strings.Split(counts, "\n")[0] != "1" || strings.Contains(counts, "take") {
		t.Fatalf("after a disk restore the counter's log is %q: its process did not start again from 1", counts)
	}
	// A stopped guest's take is of its disk alone.
	if err := b.Stop(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	var stoppedTakes []time.Duration
	for round := 0; round < 3; round++ {
		_, taken, took := take(t, b, g, box, false)
		stoppedTakes = append(stoppedTakes, took)
		if taken.Holds != providers.HoldsDisk || taken.Paused != 0 {
			t.Fatalf("a stopped guest's take holds %q and paused it %v", taken.Holds, taken.Paused)
		}
	}
	t.Logf("accel %s, 256 MiB, 1 GiB disk: memory take median %v, memory restore median %v, disk take of the running guest median %v, disk take of the stopped guest median %v, disk restore %v (then its boot to ready %v)",
		b.AccelChoice(context.Background()).Accel, median(memTakes), median(memRestores), median(diskTakes), median(stoppedTakes), diskRestore, bootTook)
}

// countsSince checks the counter's log after the memory restore of round:
// the snapshot caught the mark written before it and not the one after, and
// the counter counted on from 1 with no gap and no new start (its process
// was never stopped). It answers the last count.
func countsSince(t *testing.T, log string, round int) int {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(log), "\n")
	if !slices.Contains(lines, fmt.Sprintf("before-take-%d", round)) {
		t.Fatalf("after the memory restore the counter's log lacks the mark written before the take:\n%s", log)
	}
	if slices.Contains(lines, fmt.Sprintf("after-take-%d", round)) {
		t.Fatalf("after the memory restore the counter's log holds the mark written after the take: the memory did not come back:\n%s", log)
	}
	want := 1
	for _, line := range lines {
		n, err := strconv.Atoi(line)
		if err != nil {
			continue // a mark
		}
		if n != want {
			t.Fatalf("after the memory restore the counter's log goes from %d to %d: it did not count on from where the snapshot caught it:\n%s", want-1, n, log)
		}
		want++
	}
	return want - 1
}
