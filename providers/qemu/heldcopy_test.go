package qemu_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
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
	env, dsn, root := workerCore(t, b)
	box, g := bootedBox(t, env, b, "held-owl")
	own := markSource(t, b, g)
	first := startWorker(t, dsn, root, cfg, "")
	sn := takeOnQEMU(t, env, box.Name, "kept", false)
	keep(t, env, box.Name, sn.ID)
	first.kill()

	part := filepath.Join(cfg.Dir, "imports", sn.ID+".held.qcow2.part")
	var rop *snapshots.Operation
	for _, stall := range []string{"hold:recorded", "hold:copied", "hold:renamed"} {
		w := startWorker(t, dsn, root, cfg, stall)
		if rop == nil {
			var err error
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
	if done := resumed(t, env, rop.ID); done.State != snapshots.OpDone {
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

	forkDone(t, env, box.Name, sn.ID, "held-owl-fork")
	forkHolds(t, env, b, "held-owl-fork", "the fork of the remade copy", &own)
}
