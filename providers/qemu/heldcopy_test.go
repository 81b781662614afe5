package qemu_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/qemu"
	"github.com/boxsnap/boxsnap/providers/qemu/qemutest"
)

// TestHeldCopyInertOnQEMU: a held copy is a qcow2 file, never a
// domain, so nothing can start it, and a copy not whole is never trusted.
// The worker releasing a box with a kept snapshot is killed (SIGKILL) at
// each step of the copy: once its record says it is not whole, once its
// disk is copied (the copy then spoiled), and once the disk has its name;
// the node reboots with the copy cut short, and nothing boxsnap made runs
// after it. The next worker makes the copy again from the snapshot and
// finishes the release; the copy is listed whole, no domain reads it, and
// a fork of it boots holding the file the guest wrote before the take,
// with its own machine ID, SSH host key and host ID from its reset.
func TestHeldCopyInertOnQEMU(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := qemutest.OwnLibvirtd(t)
	b, cfg := newBackendConfig(t, func(c *qemu.Config) { c.Socket = d.Socket })
	dsn := dbtest.NewDSN(t)
	pool, err := pgxpool.New(ctx, dsn+" pool_max_conns=12")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	root := t.TempDir()
	env, err := coretest.Build(ctx, pool, coretest.Options{Install: "intest", LocalRoot: root, NoWorkers: true, NoTrash: true,
		Extra: []snapshots.Backend{{ID: b.ID(), Kind: "qemu", Label: b.ID(), Snap: b, Boxes: b}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Stop)
	box, err := env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "held-owl", Kind: qemu.KindLinux, Backend: b.ID(), Template: template})
	if err != nil {
		t.Fatalf("AcquireBox: %v", err)
	}
	g := providers.Guest{Backend: b.ID(), Kind: qemu.KindLinux, Ref: box.GuestRef, Generation: 1}
	boot(t, b, g)
	own := readIdentity(t, b, g)
	sh(t, b, g, "printf 'written before the take' > /root/state && sync")
	first := startWorker(t, dsn, root, cfg, "")
	sn := takeOnQEMU(t, env, box.Name, "kept", false)
	kop, err := env.Keeps.Keep(ctx, snapshots.Owner(), snapshots.KeepRequest{Box: box.Name, Snapshot: sn.ID})
	if err != nil {
		t.Fatalf("Keep: %v", err)
	}
	if got := waitOp(t, env, kop.ID); got.State != snapshots.OpDone {
		t.Fatalf("the keep ended %s: %s", got.State, coretest.Deref(got.Error))
	}
	first.kill()

	part := filepath.Join(cfg.Dir, "imports", sn.ID+".held.qcow2.part")
	var rop *snapshots.Operation
	for _, stall := range []string{"hold:recorded", "hold:copied", "hold:renamed"} {
		w := startWorker(t, dsn, root, cfg, stall)
		if rop == nil {
			if rop, err = env.Boxes.ReleaseBox(ctx, snapshots.Owner(), box.Name, ""); err != nil {
				t.Fatalf("ReleaseBox: %v", err)
			}
		}
		w.waitStalled(t)
		w.kill()
		listed := false
		held, err := b.HeldSnapshots(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range held {
			if h.Ref.Where == "held-copy" {
				listed = true
				if !h.Incomplete {
					t.Fatalf("the copy cut short at %s is listed whole: %+v", stall, h)
				}
			}
		}
		if !listed {
			t.Fatalf("the copy cut short at %s is not listed", stall)
		}
		if stall == "hold:copied" {
			if err := os.WriteFile(part, []byte("a copy cut short, which nothing may trust"), 0o600); err != nil {
				t.Fatal(err)
			}
			rebootStartsNothing(t, d, g.Ref)
		}
	}
	next := startWorker(t, dsn, root, cfg, "")
	done := waitOp(t, env, rop.ID)
	if done.State == snapshots.OpUnknown {
		if _, err := env.Core.CheckNow(ctx, snapshots.Owner(), rop.ID); err != nil {
			t.Fatal(err)
		}
		done = waitOp(t, env, rop.ID)
	}
	if done.State != snapshots.OpDone {
		log, _ := os.ReadFile(next.log)
		t.Fatalf("the release resumed ended %s at %s: %s\n%s", done.State, done.Step, coretest.Deref(done.Error), log)
	}
	cp := heldCopyOf(t, b, sn.ID)
	l := virshAt(t, d.Socket)
	doms, _, err := l.ConnectListAllDomains(1, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, dom := range doms {
		x, err := l.DomainGetXMLDesc(dom, 0)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(x, cp.Ref.Guest.Ref) {
			t.Fatalf("the domain %s reads the held copy %s", dom.Name, cp.Ref.Guest.Ref)
		}
	}
	if _, err := os.Stat(part); err == nil {
		t.Fatalf("the spoiled part %s is still there", part)
	}

	op, err := env.Forks.Fork(ctx, snapshots.Owner(), fork.ForkRequest{Box: box.Name, Snapshot: sn.ID, Name: "held-owl-fork"})
	if err != nil {
		t.Fatalf("Fork: %v", err)
	}
	if got := waitOp(t, env, op.ID); got.State != snapshots.OpDone {
		t.Fatalf("the fork ended %s: %s", got.State, coretest.Deref(got.Error))
	}
	forked, err := env.Core.Box(ctx, snapshots.Owner(), "held-owl-fork")
	if err != nil {
		t.Fatal(err)
	}
	fg := providers.Guest{Backend: b.ID(), Kind: qemu.KindLinux, Ref: forked.GuestRef, Generation: forked.Generation}
	running(t, b, fg)
	wctx, cancel := context.WithTimeout(ctx, bootWait)
	defer cancel()
	if _, err := qemutest.WaitBoot(wctx, b.ConsoleLog(fg), 0); err != nil {
		t.Fatalf("the fork of the remade copy: %v", err)
	}
	if got := strings.TrimSpace(sh(t, b, fg, "cat /root/state")); got != "written before the take" {
		t.Fatalf("the fork of the remade copy holds %q, want the snapshot's file", got)
	}
	id := readIdentity(t, b, fg)
	if id.MachineID == own.MachineID || id.HostKey == own.HostKey || id.HostID == own.HostID {
		t.Fatalf("the fork of the held copy kept part of its source's identity: %+v, source %+v", id, own)
	}
}
