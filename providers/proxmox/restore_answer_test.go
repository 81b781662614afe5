package proxmox_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers/proxmox"
)

// TestFailedSwapRestartsTheBox: a restore whose swap fails after its stop
// (the held copy's adoption: its clone fails, and fails again when asked
// once more) leaves the box as it found it and says exactly how: the box's
// guest is still its own, started again when it ran before the restore,
// stopped as before when it did not.
func TestFailedSwapRestartsTheBox(t *testing.T) {
	t.Parallel()
	for _, ran := range []bool{true, false} {
		t.Run(map[bool]string{true: "running", false: "stopped"}[ran], func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newSim(t, simOpts{zfsOn: true})
			env := newCore(t, e, "", nil)
			adopt(t, env, "river-elk", proxmox.KindLXC, lxcZFS)
			must(t, e.sim.Write(lxcZFS, gib))
			newest := takeDone(t, env, snapshots.Owner(), "river-elk", "newest")
			rop := restoreDone(t, env, "river-elk", newest.ID)
			if rop.UndoID == nil {
				t.Fatal("the ZFS restore recorded no undo")
			}
			if !ran {
				must(t, e.be.Stop(ctx, guest(proxmox.KindLXC, "pve-2", lxcZFS)))
			}
			// The swap's clone fails, and fails again when asked once more.
			e.sim.FailNextTask("vzclone", 0, "pvesim simulator: the test's clone fails")
			e.sim.FailNextTask("vzclone", 0, "pvesim simulator: the test's clone fails")
			op, err := env.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "river-elk", Snapshot: *rop.UndoID})
			must(t, err)
			got := env.Wait(t, op)
			if got.State != snapshots.OpFailed || got.Step != "adopt" {
				t.Fatalf("the swap ended %s at %q (%s), want failed at its adoption", got.State, got.Step, deref(got.Error))
			}
			want := "the files are as they were and the box was started again"
			if !ran {
				want = "the files are as they were and the box is stopped, as it was before the restore"
			}
			if deref(got.Observed) != want {
				t.Fatalf("the failed swap observed %q, want %q", deref(got.Observed), want)
			}
			b, err := env.Core.Box(ctx, snapshots.Owner(), "river-elk")
			must(t, err)
			if b.GuestRef != itoa(lxcZFS) {
				t.Fatalf("after the failed swap the box's guest is %s, want its own, %d", b.GuestRef, lxcZFS)
			}
			g, err := e.sim.Guest(lxcZFS)
			must(t, err)
			if g.Running != ran {
				t.Fatalf("after the failed swap the box's guest runs %v; it ran %v before the restore", g.Running, ran)
			}
		})
	}
}

// TestRestoreAnswerSaysWhatHappenedOnProxmox: a restore answers what the
// simulated Proxmox did, and its dry run said it would. A disk restore of a running VM ends its processes
// and starts it again; a memory restore's rollback resumes the VM with its
// processes, which is not started again: no failed start task ("VM already
// running") is left on the node.
func TestRestoreAnswerSaysWhatHappenedOnProxmox(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newSim(t, simOpts{})
	env := newCore(t, e, "", nil)
	adopt(t, env, "quiet-owl", proxmox.KindQEMU, qemuThin)
	disk := takeDone(t, env, snapshots.Owner(), "quiet-owl", "disk only")
	top, memory, err := env.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: "quiet-owl", Name: "with memory", Memory: true})
	must(t, err)
	if got := env.Wait(t, top); got.State != snapshots.OpDone {
		t.Fatalf("memory take: %s %s", got.State, deref(got.Error))
	}
	for _, c := range []struct {
		target    string
		processes bool
		plan      string
	}{{disk.ID, true, "; every process in it ends."}, {memory.ID, false, ", and its memory: it comes back running as it was then, with the credentials its apps held then."}} {
		// The dry run's plan says it first, as the restore dialog does.
		dry, err := env.Restores.RestoreDryRun(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "quiet-owl", Snapshot: c.target, Replace: true})
		must(t, err)
		if w := restore.DryRunWords(dry); !strings.Contains(w, "as it was then"+c.plan) {
			t.Errorf("the dry run of the restore to %s says %q, want it to say %q", c.target, w, c.plan)
		}
		if w := restore.DryRunWords(dry); !strings.Contains(w, "would stop it, take an undo of it stopped, then put back") {
			t.Errorf("the dry run of the restore to %s says %q, want that it stops the guest before it takes the undo, as the restore does", c.target, w)
		}
		got := restoreDone(t, env, "quiet-owl", c.target)
		var res restore.RestoreResult
		must(t, json.Unmarshal(got.Result, &res))
		if res.Processes != c.processes || res.BoxState != restore.BoxRunning {
			t.Fatalf("the restore to %s answered processesEnded %v and boxState %q, want %v and %q",
				res.TargetName, res.Processes, res.BoxState, c.processes, restore.BoxRunning)
		}
		if g, _ := e.sim.Guest(qemuThin); !g.Running {
			t.Fatalf("after the restore to %s the VM does not run", res.TargetName)
		}
	}
	tasks, err := e.sim.Tasks("pve-1")
	must(t, err)
	for _, tk := range tasks {
		if tk.Type == "qmstart" && !tk.Running && !strings.EqualFold(tk.ExitStatus, "OK") {
			t.Errorf("a start task the restores left failed: %s: %s", tk.UPID, tk.ExitStatus)
		}
	}
}
