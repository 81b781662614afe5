package qemu_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/qemu"
	"github.com/boxsnap/boxsnap/providers/qemu/qemutest"
)

// TestRestoreUndoHoldsTheLastWriteOnQEMU: a restore through the core stops
// the guest first and then takes its undo, so nothing the guest wrote
// before the restore is in neither the undo nor the restored box. A
// process in the guest counts without pause, writing each count to a file
// on its disk past its page cache and only then saying it on the console
// (counterCommand); after a restore (to a disk snapshot, then to one with
// memory), the undo's file, read from the undo without booting it, holds
// at least the last count the console said (the count in flight at the
// stop may be on the disk and not yet said, never said and not on the
// disk).
// Undoing the restore is a disk restore, never a memory one: the guest
// boots again, its file as the undo holds it. Before any of it, a restore
// whose undo has no room is refused before the guest stops: it runs on in
// the same boot.
func TestRestoreUndoHoldsTheLastWriteOnQEMU(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, cfg := newBackendConfig(t)
	env := newCore(t, b)
	box, g := bootedBox(t, env, b, "busy-wren")
	take := func(name string, memory bool) string {
		t.Helper()
		op, sn, err := env.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: box.Name, Name: name, Memory: memory})
		if err != nil {
			t.Fatalf("take %s: %v", name, err)
		}
		if got := env.Wait(t, op); got.State != snapshots.OpDone {
			t.Fatalf("take %s ended %s: %s", name, got.State, coretest.Deref(got.Error))
		}
		return sn.ID
	}
	targets := []string{take("disk only", false), take("with memory", true)}

	refusedWithoutRoom(t, env, b, cfg, g, box.Name, targets[0])

	console := b.ConsoleLog(g)
	for round, target := range targets {
		running(t, b, g)
		file := fmt.Sprintf("/root/count-%d", round)
		sh(t, b, g, counterCommand(round, file))
		saidCount(t, console, round, 20)
		ref := providers.SnapshotRef{ID: target, Ref: target, Guest: g}
		plan, err := b.PlanSnapshots(ctx, g, &ref)
		if err != nil {
			t.Fatal(err)
		}
		res, _ := restoreThroughTheCore(t, env, box.Name, target)
		said := saidCount(t, console, round, 1)
		undo, _, err := env.Core.Snapshot(ctx, snapshots.Owner(), res.Undo)
		if err != nil {
			t.Fatalf("round %d: the undo %q: %v", round, res.Undo, err)
		}
		var read strings.Builder
		if _, err := b.ReadFile(ctx, providers.SnapshotRef{ID: undo.ID, Ref: undo.Ref, Guest: g}, strings.TrimPrefix(file, "/"), &read); err != nil {
			t.Fatalf("round %d: read %s from the undo: %v", round, file, err)
		}
		held := lastCount(read.String())
		t.Logf("round %d (order %v): the console said %d before the stop; the undo's file holds %d", round, plan.Restore.Order, said, held)
		if held < said {
			t.Errorf("round %d: the undo holds count %d, and the console had said %d before the restore: %d counts the guest wrote before it stopped are in neither the undo nor the restored box",
				round, held, said, said-held)
		}
		if stop, undoAt := slices.Index(plan.Restore.Order, providers.StepStop), slices.Index(plan.Restore.Order, providers.StepUndo); stop < 0 || undoAt < stop {
			t.Errorf("round %d: the plan's order %v does not stop the guest before its undo", round, plan.Restore.Order)
		}
		if undo.Holds != string(providers.HoldsDisk) {
			t.Errorf("round %d: the undo holds %q, want its disk alone (the guest was stopped)", round, undo.Holds)
		}

		// Undone: a disk restore, the guest booted again from the undo's
		// disk.
		boots := len(qemutest.Boots(console))
		back, _ := restoreThroughTheCore(t, env, box.Name, undo.ID)
		if !back.Processes || back.BoxState != "running" {
			t.Errorf("round %d: undoing the restore answered processesEnded %v and boxState %q, want a disk restore that starts the guest again", round, back.Processes, back.BoxState)
		}
		wctx, cancel := context.WithTimeout(ctx, bootWait)
		_, err = qemutest.WaitBoot(wctx, console, boots)
		cancel()
		if err != nil {
			t.Fatalf("round %d: undone, the guest's boot: %v", round, err)
		}
		if got := lastCount(sh(t, b, g, "cat "+file)); got != held {
			t.Errorf("round %d: undone, the guest's %s ends at %d, and the undo's at %d", round, file, got, held)
		}
	}
}

// counterCommand starts, in the guest, round's counter, which writes each
// count over the one before in file, a block of its own written past the
// guest's page cache (O_DIRECT: QEMU has it in the disk's file before the
// write returns, so a hard stop keeps it), and only then says it on the
// console. The block is written and synced first, so each count's write
// changes its data only. Safe to run twice (the test shell may send a
// command again): the mark in /tmp starts one counter only.
func counterCommand(round int, file string) string {
	count := fmt.Sprintf(`dd if=/dev/zero of=%[2]s bs=4096 count=1 2>/dev/null && sync && n=0 && while :; do n=$((n+1)); `+
		`printf "%%-4095s\n" $n | dd of=%[2]s bs=4096 count=1 iflag=fullblock oflag=direct conv=notrunc 2>/dev/null || exit 1; `+
		`echo count-%[1]d-$n > /dev/ttyS0; done`, round, file)
	return fmt.Sprintf("test -e /tmp/counting-%[1]d || { touch /tmp/counting-%[1]d; sh -c '%[2]s' </dev/null >/dev/null 2>&1 & }", round, count)
}

// refusedWithoutRoom: a restore of box to target whose undo has no room
// (the backend's imports folder a small file system of its own, filled
// past the room setting) is refused before anything stops: the guest runs
// on in the same boot, and no restore is recorded. The folder is emptied
// again after.
func refusedWithoutRoom(t *testing.T, env *coretest.Env, b *qemu.Backend, cfg qemu.Config, g providers.Guest, box, target string) {
	t.Helper()
	ctx := context.Background()
	imports := filepath.Join(cfg.Dir, "imports")
	if err := os.MkdirAll(imports, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs", imports).CombinedOutput(); err != nil {
		t.Fatalf("mount a small file system on %s: %v: %s", imports, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", imports).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", imports, err, out)
		}
	})
	filler := filepath.Join(imports, "filler")
	if err := os.WriteFile(filler, make([]byte, 15<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	boot := bootID(t, b, g)
	_, err := env.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: box, Snapshot: target})
	coretest.RefusedWith(t, err, "Or untick the undo to restore without one.")
	var restores int
	if err := env.Pool.QueryRow(ctx, "SELECT count(*) FROM operations WHERE kind = 'restore'").Scan(&restores); err != nil || restores != 0 {
		t.Fatalf("a restore refused for its undo's room left %d operations (%v)", restores, err)
	}
	if on, err := b.Runs(ctx, g); err != nil || !on {
		t.Fatalf("a restore refused for its undo's room left the guest stopped (%v)", err)
	}
	if again := bootID(t, b, g); again != boot {
		t.Fatalf("a restore refused for its undo's room stopped the guest: it booted again (boot %s, was %s)", again, boot)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
}

// saidCount waits until the counter of round has said at least least counts
// on the console log, and answers the last it said.
func saidCount(t *testing.T, log string, round, least int) int {
	t.Helper()
	re := regexp.MustCompile(fmt.Sprintf(`count-%d-(\d+)\r?\n`, round))
	deadline := time.Now().Add(bootWait)
	for {
		raw, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		last, n := 0, 0
		for _, m := range re.FindAllStringSubmatch(string(raw), -1) {
			v, _ := strconv.Atoi(m[1])
			last, n = max(last, v), n+1
		}
		if n >= least {
			return last
		}
		if time.Now().After(deadline) {
			t.Fatalf("round %d: the guest's counter said %d counts on its console in %v, want %d", round, n, bootWait, least)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// lastCount is the highest whole count in a counter's file, one a line (a
// line cut short by the stop is left out).
func lastCount(file string) int {
	last := 0
	for _, line := range strings.Split(file, "\n") {
		if v, err := strconv.Atoi(strings.TrimSpace(line)); err == nil {
			last = max(last, v)
		}
	}
	return last
}
