package proxmox_test

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/proxmox"
)

var macOf = regexp.MustCompile(`hwaddr=([0-9A-Fa-f:]{17})`)

// killAt is a point a worker is killed at: an operation's step, while a
// task of a type runs ("" for a step with no task of its own).
type killAt struct {
	phase string // "restore" or "undo"
	step  string
	task  string
}

// TestZFSUndoSwap: on ZFS (the switch on), a restore to the newest snapshot
// takes the held copy of the stopped guest as its undo; Undo swaps it in:
// a new guest with the box's MAC addresses, onboot set and links up,
// holding what the box held before the restore; the old guest becomes the
// earlier guest, disarmed with MAC addresses not the box's, its snapshots
// listed on it, fork only; the copy's template goes. The same with the
// worker killed at each step that runs a task, and recovered by a new one.
func TestZFSUndoSwap(t *testing.T) {
	t.Parallel()
	slow := 600 * time.Millisecond
	cases := []struct {
		name string
		kill *killAt
	}{
		{"NoKill", nil},
		{"KilledAtTheCopysClone", &killAt{"restore", snapshots.StepCopyClone, "vzclone"}},
		{"KilledAtTheCopysTemplate", &killAt{"restore", snapshots.StepCopyTemplate, ""}},
		{"KilledAtTheUndosStop", &killAt{"undo", "stop", "vzstop"}},
		{"KilledAtTheAdoption", &killAt{"undo", "adopt", "vzclone"}},
		{"KilledAtTheStart", &killAt{"undo", "start", "vzstart"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			durations := map[string]time.Duration{}
			if c.kill != nil {
				durations[c.kill.task] = slow
				if c.kill.task == "" {
					durations["vztemplate"] = slow
				}
			}
			e := newSim(t, simOpts{zfsOn: true, durations: durations})
			// This process admits; the worker processes run.
			env, _, dsn, root := workerCore(t, e)
			ctx := context.Background()
			w := startWorker(t, e, dsn, root, workerZFS+"=1")

			b := adopt(t, env, "river-elk", proxmox.KindLXC, lxcZFS)
			orig, _ := e.sim.Guest(lxcZFS)
			mac := macOf.FindStringSubmatch(orig.Config["net0"])[1]
			must(t, e.sim.Write(lxcZFS, gib))
			first := takeDone(t, env, snapshots.Owner(), "river-elk", "first")
			must(t, e.sim.Write(lxcZFS, gib))
			newest := takeDone(t, env, snapshots.Owner(), "river-elk", "newest")
			atNewest := written(t, e, lxcZFS)
			must(t, e.sim.Write(lxcZFS, 2*gib))
			before := written(t, e, lxcZFS) // what the undo must bring back

			run := func(phase, snap string) *snapshots.Operation {
				op, err := env.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "river-elk", Snapshot: snap})
				must(t, err)
				if c.kill != nil && c.kill.phase == phase {
					waitFor(t, "the "+phase+" at "+c.kill.step, func() bool {
						got, err := env.Core.Operation(ctx, snapshots.Owner(), op.ID)
						must(t, err)
						var task providers.TaskRef
						_ = json.Unmarshal(got.Task, &task)
						return got.Step == c.kill.step && (c.kill.task == "" || strings.Contains(task.ID, ":"+c.kill.task+":"))
					})
					w.kill()
					w = startWorker(t, e, dsn, root, workerZFS+"=1")
				}
				got := env.Wait(t, op)
				if got.State != snapshots.OpDone {
					log, _ := os.ReadFile(w.log)
					t.Fatalf("the %s: %s %q %q\n%s", phase, got.State, deref(got.Error), deref(got.Observed), log)
				}
				return got
			}

			rop := run("restore", newest.ID)
			if got := written(t, e, lxcZFS); got != atNewest {
				t.Fatalf("after the restore: %d written, want %d", got, atNewest)
			}
			if rop.UndoID == nil {
				t.Fatalf("the ZFS restore recorded no undo")
			}
			undo, _, err := env.Core.Snapshot(ctx, snapshots.Owner(), *rop.UndoID)
			must(t, err)
			if undo.Guest != "held-copy" || undo.State != snapshots.StateReady || undo.UndoOf == nil {
				t.Fatalf("the undo: %+v; want a ready held copy, this restore's undo", undo)
			}
			if n := len(heldCopies(t, e)); n != 1 {
				t.Fatalf("%d held copies after the restore, want 1 (a copy cut short is made again, never kept beside)", n)
			}

			run("undo", undo.ID)
			nb, err := env.Core.Box(ctx, snapshots.Owner(), "river-elk")
			must(t, err)
			if nb.GuestRef == itoa(lxcZFS) || nb.ID != b.ID || nb.Generation != b.Generation+1 {
				t.Fatalf("after the undo the box is %+v; want the same box on a new guest, its next generation", nb)
			}
			vmid, _ := strconv.Atoi(nb.GuestRef)
			ng, err := e.sim.Guest(vmid)
			must(t, err)
			if ng.Written != before || !ng.Running || !ng.OnBoot || strings.Contains(ng.Config["net0"], "link_down=1") || ng.Template {
				t.Fatalf("the new guest: written %d (want %d), running %v, onboot %v, net0 %q", ng.Written, before, ng.Running, ng.OnBoot, ng.Config["net0"])
			}
			if got := macOf.FindStringSubmatch(ng.Config["net0"])[1]; !strings.EqualFold(got, mac) {
				t.Fatalf("the new guest's MAC %s, want the box's %s: it would reset", got, mac)
			}
			old, err := e.sim.Guest(lxcZFS)
			must(t, err)
			if old.Running || old.OnBoot || !strings.Contains(old.Config["net0"], "link_down=1") || strings.EqualFold(macOf.FindStringSubmatch(old.Config["net0"])[1], mac) ||
				!strings.Contains(old.Config["tags"], proxmox.EarlierTag) || len(old.Snapshots) != 2 {
				t.Fatalf("the earlier guest: running %v onboot %v net0 %q tags %q, %d snapshots", old.Running, old.OnBoot, old.Config["net0"], old.Config["tags"], len(old.Snapshots))
			}
			for _, id := range []string{first.ID, newest.ID} {
				sn, _, err := env.Core.Snapshot(ctx, snapshots.Owner(), id)
				must(t, err)
				if sn.Guest != "earlier" || sn.State != snapshots.StateReady {
					t.Fatalf("%s after the swap: guest %s state %s; want on the earlier guest", sn.Name, sn.Guest, sn.State)
				}
				if _, err := env.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "river-elk", Snapshot: id}); err == nil ||
					err.Error() != "‘"+sn.Name+"’ is on river-elk's earlier guest: fork only." {
					t.Fatalf("restore of %s on the earlier guest: %v", sn.Name, err)
				}
			}
			if n := len(heldCopies(t, e)); n != 0 {
				t.Fatalf("%d held copies after the swap; the swapped-in copy's template should go", n)
			}
			if snapshotState(t, env, undo.ID) != "gone" {
				t.Fatalf("the swapped-in undo is still listed")
			}
			for _, id := range []string{newest.ID, first.ID, undo.ID} {
				if n := pinned(t, env, id); n != 0 {
					t.Fatalf("%s still pinned", id)
				}
			}
		})
	}
}
