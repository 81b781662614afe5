package qemu_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/digitalocean/go-libvirt"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/qemu"
	"github.com/boxsnap/boxsnap/providers/qemu/qemutest"
)

// TestForkCutShortInertOnQEMU: a fork's copy not finished is remade, never
// trusted, and no guest boxsnap made starts by itself (a held copy's own
// test is TestHeldCopyInertOnQEMU). The worker running a fork is
// killed (SIGKILL) once the fork's disk is copied and before its domain is
// defined, and the left-over disk is spoiled; the next worker copies it
// again from the snapshot, so the fork boots holding the file the guest
// wrote before the take, with its own machine ID, SSH host key and host ID
// from its identity reset. libvirt starts neither the source's domain nor
// the fork's when it starts (autostart off): the node reboots while the
// fork is cut short (libvirtd and every QEMU killed at once, libvirtd
// started again, on a libvirtd of the test's own), and no guest boxsnap
// made runs after it; the reconcile afterwards finds every snapshot.
func TestForkCutShortInertOnQEMU(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := qemutest.OwnLibvirtd(t)
	b, cfg := newBackendConfig(t, func(c *qemu.Config) { c.Socket = d.Socket })
	env, dsn, root := workerCore(t, b)
	box, g := bootedBox(t, env, b, "inert-owl")
	own := markSource(t, b, g)
	first := startWorker(t, dsn, root, cfg, "")
	sn := takeOnQEMU(t, env, box.Name, "source", false)
	first.kill()

	w := startWorker(t, dsn, root, cfg, "fork:copied")
	op, err := env.Forks.Fork(ctx, snapshots.Owner(), fork.ForkRequest{Box: box.Name, Snapshot: sn.ID, Name: "inert-owl-fork"})
	if err != nil {
		t.Fatalf("Fork: %v", err)
	}
	w.waitStalled(t)
	w.kill()
	disks, err := filepath.Glob(filepath.Join(cfg.Dir, "*.qcow2"))
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, d := range disks {
		if filepath.Base(d) != g.Ref+".qcow2" {
			left = append(left, d)
		}
	}
	if len(left) != 1 {
		t.Fatalf("the fork cut short left the disks %v, want its one copy", left)
	}
	if err := os.WriteFile(left[0], []byte("a copy cut short, which nothing may trust"), 0o600); err != nil {
		t.Fatal(err)
	}
	rebootStartsNothing(t, d, g.Ref)

	next := startWorker(t, dsn, root, cfg, "")
	if done := resumed(t, env, op.ID); done.State != snapshots.OpDone {
		log, _ := os.ReadFile(next.log)
		t.Fatalf("the fork resumed ended %s at %s: %s\n%s", done.State, done.Step, coretest.Deref(done.Error), log)
	}
	fg := forkHolds(t, env, b, "inert-owl-fork", "the remade fork", &own)

	l := virshAt(t, d.Socket)
	for _, ref := range []string{g.Ref, fg.Ref} {
		d, err := l.DomainLookupByName(ref)
		if err != nil {
			t.Fatalf("the domain %s: %v", ref, err)
		}
		if on, err := l.DomainGetAutostart(d); err != nil || on != 0 {
			t.Fatalf("libvirt starts %s by itself (autostart %d, %v)", ref, on, err)
		}
	}
	reconcileFinds(t, env, b, sn)
}

// reconcileFinds runs the reconcile after the node's reboot: it misses
// nothing, and the snapshot is ready and held by libvirt.
func reconcileFinds(t *testing.T, env *coretest.Env, b *qemu.Backend, sn *snapshots.Snapshot) {
	t.Helper()
	ctx := context.Background()
	rep, err := env.Sweeps.Reconcile(ctx)
	if err != nil {
		t.Fatalf("the reconcile after the node's reboot: %v", err)
	}
	if rep.Missing+rep.Lost+rep.Unavailable != 0 || len(rep.Unreachable) != 0 {
		t.Fatalf("the reconcile after the node's reboot missed snapshots: %+v", rep)
	}
	held, err := b.HeldSnapshots(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found, _, err := env.Core.Snapshot(ctx, snapshots.Owner(), sn.ID)
	if err != nil {
		t.Fatal(err)
	}
	if found.State != snapshots.StateReady || !slices.ContainsFunc(held, func(h providers.HeldSnapshot) bool { return h.Ref.Ref == sn.Ref }) {
		t.Fatalf("after the node's reboot the snapshot is %s, libvirt holding %+v; want it ready and held", found.State, held)
	}
}

// rebootStartsNothing reboots the node under the test's own libvirtd d (the
// daemon and every QEMU killed at once, the daemon started again) and
// checks that no domain of the backend's runs after it, none set to start
// by itself, and that the source's domain is still defined.
func rebootStartsNothing(t *testing.T, d *qemutest.Daemon, source string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := d.Reboot(ctx); err != nil {
		t.Fatalf("the node's reboot: %v", err)
	}
	l := virshAt(t, d.Socket)
	doms, _, err := l.ConnectListAllDomains(1, 0)
	if err != nil {
		t.Fatalf("list the domains after the reboot: %v", err)
	}
	seen := false
	for _, dom := range doms {
		seen = seen || dom.Name == source
		st, _, err := l.DomainGetState(dom, 0)
		if err != nil {
			t.Fatalf("the state of %s after the reboot: %v", dom.Name, err)
		}
		if st != int32(libvirt.DomainShutoff) {
			t.Errorf("%s runs after the node's reboot (state %d): nothing boxsnap made may start by itself", dom.Name, st)
		}
		if on, err := l.DomainGetAutostart(dom); err != nil || on != 0 {
			t.Errorf("libvirt starts %s by itself (autostart %d, %v)", dom.Name, on, err)
		}
	}
	if !seen {
		t.Fatalf("the source's domain %s is gone after the node's reboot; libvirt lists %v", source, doms)
	}
}
