package proxmox_test

import (
	"context"
	"github.com/boxsnap/boxsnap/providers"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/providers/proxmox"
	"github.com/boxsnap/boxsnap/providers/pvesim"
)

// keepDone keeps a snapshot for the setting's days and waits.
func keepDone(t testing.TB, env *coretest.Env, box, id string) *snapshots.Snapshot {
	t.Helper()
	ctx := context.Background()
	op, err := env.Keeps.Keep(ctx, snapshots.Owner(), snapshots.KeepRequest{Box: box, Snapshot: id})
	must(t, err)
	if got := env.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("keep %s: %s %s", id, got.State, deref(got.Error))
	}
	sn, _, err := env.Core.Snapshot(ctx, snapshots.Owner(), id)
	must(t, err)
	return sn
}

// heldCopies are the templates in boxsnap's range that carry a held copy's
// label, by the snapshot they copy.
func heldCopies(t testing.TB, e *simEnv) map[string]pvesim.GuestInfo {
	t.Helper()
	out := map[string]pvesim.GuestInfo{}
	for id := proxmox.DefaultVMIDFirst; id < proxmox.DefaultVMIDFirst+50; id++ {
		g, err := e.sim.Guest(id)
		if err != nil {
			continue
		}
		if l, ok := proxmox.ParseLabel(g.Config["description"]); ok && l.Held != "" {
			out[l.Snapshot] = g
		}
	}
	return out
}

// TestKeptOutlivesRelease: keep, release, restart boxsnap, then fork the kept
// snapshot and read what was written before the take. The simulator holds a
// guest's disk as the bytes written to it, so the fork's disk is checked by
// that count.
func TestKeptOutlivesRelease(t *testing.T) {
	t.Parallel()
	e := newSim(t, simOpts{})
	pool := dbtest.New(t)
	env := buildCore(t, pool, e, "", nil)
	ctx := context.Background()
	adopt(t, env, "amber-fox", proxmox.KindLXC, lxcThin)
	must(t, e.sim.Write(lxcThin, 2*gib))
	atTake := written(t, e, lxcThin)
	kept := takeDone(t, env, snapshots.Owner(), "amber-fox", "before the upgrade")
	plain := takeDone(t, env, snapshots.Owner(), "amber-fox", "plain")
	must(t, e.sim.Write(lxcThin, 3*gib)) // after the take: not in the kept snapshot
	kept = keepDone(t, env, "amber-fox", kept.ID)

	op, err := env.Boxes.ReleaseBox(ctx, snapshots.Owner(), "amber-fox", "")
	must(t, err)
	if got := env.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("release: %s %s", got.State, deref(got.Error))
	}
	if _, err := e.sim.Guest(lxcThin); err == nil {
		t.Fatalf("the released guest %d is still there", lxcThin)
	}
	copies := heldCopies(t, e)
	cp, ok := copies[kept.ID]
	if !ok || len(copies) != 1 {
		t.Fatalf("held copies after the release: %v; want one, of %s", copies, kept.ID)
	}
	if !cp.Template || cp.OnBoot || !strings.Contains(cp.Config["net0"], "link_down=1") || cp.Pool != "" && cp.Pool != "boxsnap" {
		t.Fatalf("the held copy is not inert: template %v onboot %v net0 %q", cp.Template, cp.OnBoot, cp.Config["net0"])
	}
	if cp.Written != atTake {
		t.Fatalf("the held copy holds %d written, want %d (the snapshot's)", cp.Written, atTake)
	}
	if snapshotState(t, env, plain.ID) != "gone" {
		t.Fatalf("the unkept snapshot outlived the release")
	}

	env.Stop()
	again := buildCore(t, pool, e, "", nil)
	sn, _, err := again.Core.Snapshot(ctx, snapshots.Owner(), kept.ID)
	must(t, err)
	if sn.Guest != "held-copy" || sn.State != snapshots.StateReady || sn.KeptUntil == nil || sn.BoxGoneAt == nil {
		t.Fatalf("the kept snapshot after the release and a restart: %+v", sn)
	}
	fop, err := again.Forks.Fork(ctx, snapshots.Owner(), fork.ForkRequest{Box: "amber-fox", Snapshot: kept.ID, Name: "amber-fox-again"})
	must(t, err)
	got := again.Wait(t, fop)
	if got.State != snapshots.OpDone {
		t.Fatalf("fork of the kept snapshot: %s %s", got.State, deref(got.Error))
	}
	fork, err := again.Core.Box(ctx, snapshots.Owner(), "amber-fox-again")
	must(t, err)
	if fork.ThreadID != nil {
		t.Fatalf("a kept snapshot of a released box forks as one of the person's machines, not thread %s", *fork.ThreadID)
	}
	var vmid int
	for _, c := range fork.GuestRef {
		vmid = vmid*10 + int(c-'0')
	}
	fg, err := e.sim.Guest(vmid)
	must(t, err)
	if fg.Written != atTake || fg.Template || !fg.Running {
		t.Fatalf("the fork: written %d (want %d, what was on the disk at the take), template %v, running %v", fg.Written, atTake, fg.Template, fg.Running)
	}
	if strings.Contains(fg.Config["net0"], "link_down=1") || !fg.OnBoot {
		t.Fatalf("the fork is not re-armed: onboot %v, net0 %q", fg.OnBoot, fg.Config["net0"])
	}
}

// TestReleaseStopsWhenACopyFails: with too little room for the held copy, the
// release stops saying why, deletes nothing, and the box can be released
// again; "Release and delete it" then releases it.
func TestReleaseStopsWhenACopyFails(t *testing.T) {
	t.Parallel()
	e := newSim(t, simOpts{})
	env := newCore(t, e, "", nil)
	ctx := context.Background()
	adopt(t, env, "amber-fox", proxmox.KindLXC, lxcThin)
	kept := takeDone(t, env, snapshots.Owner(), "amber-fox", "Thu 09:15")
	plain := takeDone(t, env, snapshots.Owner(), "amber-fox", "plain")
	keepDone(t, env, "amber-fox", kept.ID)
	must(t, e.sim.FillStorage("pve-1", "local-lvm", 84))

	op, err := env.Boxes.ReleaseBox(ctx, snapshots.Owner(), "amber-fox", "")
	must(t, err)
	got := env.Wait(t, op)
	want := "Release did not finish: boxsnap could not copy ‘Thu 09:15’ (pve-1 has 5.4 GB free, and it needs 8.6 GB)"
	if got.State != snapshots.OpFailed || deref(got.Error) != want {
		t.Fatalf("release with no room: %s %q; want failed %q", got.State, deref(got.Error), want)
	}
	g, err := e.sim.Guest(lxcThin)
	if err != nil || len(g.Snapshots) != 2 {
		t.Fatalf("after the stopped release: guest %v, %d snapshots; want both still there", err, len(g.Snapshots))
	}
	for _, id := range []string{kept.ID, plain.ID} {
		if st := snapshotState(t, env, id); st != snapshots.StateReady {
			t.Fatalf("%s is %s after the stopped release", id, st)
		}
	}
	if len(heldCopies(t, e)) != 0 {
		t.Fatalf("a held copy was left")
	}
	b, err := env.Core.Box(ctx, snapshots.Owner(), "amber-fox")
	must(t, err)
	if b.State != "ready" {
		t.Fatalf("the box is %s after the stopped release; want ready, to release again", b.State)
	}
	if _, err := env.Boxes.ReleaseBoxDeletingKept(ctx, snapshots.Caller{Kind: snapshots.CallerAgent, Thread: "th000000000000"}, "amber-fox", ""); err == nil {
		t.Fatalf("an agent deleted what the person kept")
	}
	op, err = env.Boxes.ReleaseBoxDeletingKept(ctx, snapshots.Owner(), "amber-fox", "")
	must(t, err)
	if got := env.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("release and delete it: %s %s", got.State, deref(got.Error))
	}
	if _, err := e.sim.Guest(lxcThin); err == nil {
		t.Fatalf("the guest outlived “Release and delete it”")
	}
	if snapshotState(t, env, kept.ID) != "gone" {
		t.Fatalf("the kept snapshot outlived “Release and delete it”")
	}
}

// TestHeldCopyRemade: boxsnap killed after a release's clone and before the
// copy is a template, and the node rebooted at that moment (the template task
// dies): the copy is not trusted; the new worker deletes it and copies again,
// and the remade copy holds what the snapshot held; no copy ever started,
// since a held copy must never start by itself.
func TestHeldCopyRemade(t *testing.T) {
	t.Parallel()
	e := newSim(t, simOpts{})
	dsn := dbtest.NewDSN(t)
	pool, err := pgxpool.New(context.Background(), dsn)
	must(t, err)
	t.Cleanup(pool.Close)
	root := t.TempDir()
	ctx := context.Background()
	env, err := coretest.Build(ctx, pool, coretest.Options{Install: install, LocalRoot: root, NoWorkers: true, NoTrash: true,
		Extra: []snapshots.Backend{{ID: "pve-lab", Kind: "proxmox", Label: "pve-lab", Snap: e.be, Boxes: e.be}}})
	must(t, err)
	w := startWorker(t, e, dsn, root)
	adopt(t, env, "amber-fox", proxmox.KindLXC, lxcThin)
	must(t, e.sim.Write(lxcThin, gib))
	atTake := written(t, e, lxcThin)
	kept := takeDone(t, env, snapshots.Owner(), "amber-fox", "kept")
	must(t, e.sim.Write(lxcThin, gib))
	keepDone(t, env, "amber-fox", kept.ID)

	// The copy's template task runs until the node's reboot kills it.
	e.sim.StallNextTask("vztemplate", 0)
	op, err := env.Boxes.ReleaseBox(ctx, snapshots.Owner(), "amber-fox", "")
	must(t, err)
	waitFor(t, "the release at the copy's template, its task running", func() bool {
		got, err := env.Core.Operation(ctx, snapshots.Owner(), op.ID)
		must(t, err)
		if got.Step != snapshots.StepCopyTemplate {
			return false
		}
		tasks, err := e.sim.Tasks("pve-1")
		must(t, err)
		for _, tk := range tasks {
			if tk.Type == "vztemplate" && tk.Running {
				return true
			}
		}
		return false
	})
	w.kill()
	must(t, e.sim.RebootNode("pve-1"))
	var first int
	for vmid, g := range heldCopiesAll(t, e) {
		if g.Template {
			t.Fatalf("the copy %d became a template though its task died", vmid)
		}
		if g.Running {
			t.Fatalf("the part-made copy %d started at the node's boot", vmid)
		}
		first = vmid
	}
	if first == 0 {
		t.Fatalf("no part-made copy after the kill")
	}
	w = startWorker(t, e, dsn, root)
	got := env.Wait(t, op)
	if got.State != snapshots.OpDone {
		log, _ := os.ReadFile(w.log)
		t.Fatalf("the release after the kill: %s %q\n%s", got.State, deref(got.Error), log)
	}
	copies := heldCopies(t, e)
	cp, ok := copies[kept.ID]
	if !ok || len(copies) != 1 || !cp.Template || cp.Running || cp.Written != atTake {
		t.Fatalf("after the release: copies %v; want one template holding %d written", copies, atTake)
	}
	remade := false
	for _, ev := range boxLog(t, env, "amber-fox") {
		if ev.Kind == snapshots.EvHeldCopyStarted && strings.Contains(ev.Words, "cut short before it was a template, so boxsnap deleted it and copied again") {
			remade = true
		}
	}
	if !remade {
		t.Fatalf("the box log does not say the copy was made again")
	}
	if _, err := e.sim.Guest(lxcThin); err == nil {
		t.Fatalf("the guest outlived its release")
	}
}

// heldCopiesAll are the guests in boxsnap's range that carry a held copy's
// label, templates or not, by VMID.
func heldCopiesAll(t testing.TB, e *simEnv) map[int]pvesim.GuestInfo {
	t.Helper()
	out := map[int]pvesim.GuestInfo{}
	for id := proxmox.DefaultVMIDFirst; id < proxmox.DefaultVMIDFirst+50; id++ {
		if g, err := e.sim.Guest(id); err == nil {
			if l, ok := proxmox.ParseLabel(g.Config["description"]); ok && l.Held != "" {
				out[id] = g
			}
		}
	}
	return out
}

// TestHeldCopyExpires: a released box's kept snapshot lives in its held copy
// until its keep date; then the expiry deletes the copy.
func TestHeldCopyExpires(t *testing.T) {
	t.Parallel()
	e := newSim(t, simOpts{})
	clk := newClock()
	env := newCore(t, e, "", clk.Now)
	ctx := context.Background()
	adopt(t, env, "amber-fox", proxmox.KindLXC, lxcThin)
	sn := takeDone(t, env, snapshots.Owner(), "amber-fox", "kept a day")
	op, err := env.Keeps.Keep(ctx, snapshots.Owner(), snapshots.KeepRequest{Box: "amber-fox", Snapshot: sn.ID, Days: 1})
	must(t, err)
	if got := env.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("keep: %s %s", got.State, deref(got.Error))
	}
	op, err = env.Boxes.ReleaseBox(ctx, snapshots.Owner(), "amber-fox", "")
	must(t, err)
	if got := env.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("release: %s %s", got.State, deref(got.Error))
	}
	if len(heldCopies(t, e)) != 1 {
		t.Fatal("no held copy after the release")
	}
	clk.Advance(3 * 24 * time.Hour)
	ops, err := env.Sweeps.ExpireKeeps(ctx)
	must(t, err)
	if len(ops) != 1 {
		t.Fatalf("expiry ops %+v", ops)
	}
	if got := env.Wait(t, ops[0]); got.State != snapshots.OpDone {
		t.Fatalf("expiry: %s %s", got.State, deref(got.Error))
	}
	if n := len(heldCopiesAll(t, e)); n != 0 || snapshotState(t, env, sn.ID) != "gone" {
		t.Fatalf("after the expiry: %d held copies, the snapshot %s", n, snapshotState(t, env, sn.ID))
	}
}

// TestHeldCopyClonedFindsItsCopyOrSaysSo: asked to go on with the copy its
// clone made (providers.HeldCopyCloned) when no guest carries that copy's
// label, HoldCopy says so and clones nothing: a job that woke after its
// clone's task would otherwise clone again on every wake.
func TestHeldCopyClonedFindsItsCopyOrSaysSo(t *testing.T) {
	t.Parallel()
	e := newSim(t, simOpts{})
	ctx := context.Background()
	src := providers.SnapshotRef{ID: "snmissingcopy1", Guest: guest(proxmox.KindLXC, "pve-1", lxcThin)}
	label := providers.Label{Install: install, Box: "bxamberfox", Snapshot: "snmissingcopy1", Held: "guest", Kind: proxmox.KindLXC}
	_, err := e.be.HoldCopy(ctx, src, label, providers.HeldCopyCloned, nil)
	if err == nil || !strings.Contains(err.Error(), "the held copy that clone made is not on pve-lab") {
		t.Fatalf("HoldCopy as cloned with no copy: %v", err)
	}
	if g, err := e.sim.Guest(9000); err == nil {
		t.Fatalf("HoldCopy as cloned made guest %+v", g)
	}
}
