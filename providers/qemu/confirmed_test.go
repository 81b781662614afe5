package qemu_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/digitalocean/go-libvirt"
	"github.com/digitalocean/go-libvirt/socket/dialers"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/qemu"
	"github.com/boxsnap/boxsnap/providers/qemu/qemutest"
)

// virsh is a connection of the test's own to its libvirtd, to watch and
// harm a guest as a person at the host would.
func virsh(t *testing.T) *libvirt.Libvirt {
	t.Helper()
	return virshAt(t, qemutest.Libvirtd(t).Socket)
}

// virshAt is virsh, on the libvirtd answering at socket.
func virshAt(t *testing.T, socket string) *libvirt.Libvirt {
	t.Helper()
	l := libvirt.NewWithDialer(dialers.NewLocal(dialers.WithSocket(socket), dialers.WithLocalTimeout(5*time.Second)))
	if err := l.ConnectToURI(libvirt.QEMUSystem); err != nil {
		t.Fatalf("connect to the test's libvirtd: %v", err)
	}
	t.Cleanup(func() { _ = l.Disconnect() })
	return l
}

// qemuPID is the process ID of the QEMU running the guest, from the pid
// file the test's libvirtd keeps.
func qemuPID(t *testing.T, ref string) int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(qemutest.Libvirtd(t).Dir, "run", "qemu", ref+".pid"))
	if err != nil {
		t.Fatalf("the QEMU of %s: %v", ref, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatalf("the QEMU of %s: pid %q", ref, raw)
	}
	return pid
}

// internalSnapshots lists the names of the qcow2 internal snapshots in a
// stopped guest's disk, as qemu-img reads them.
func internalSnapshots(t *testing.T, disk string) string {
	t.Helper()
	out, err := exec.Command("qemu-img", "snapshot", "-l", "-U", disk).CombinedOutput()
	if err != nil {
		t.Fatalf("qemu-img snapshot -l %s: %v: %s", disk, err, out)
	}
	return string(out)
}

// killMidTake kills the guest's QEMU part way through a take, the process
// stopped (SIGSTOP) before libvirt asked it for the checkpoint: it waits
// until libvirt's take is under way, waiting on the stopped QEMU's monitor,
// then kills it (SIGKILL, as the host's out-of-memory killer would). It
// answers whether it saw the take under way before the kill.
func killMidTake(l *libvirt.Libvirt, pid int, name string) bool {
	defer syscall.Kill(pid, syscall.SIGKILL)
	d, err := l.DomainLookupByName(name)
	if err != nil {
		return false
	}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		st, _, _, err := l.DomainGetControlInfo(d, 0)
		if err == nil && (st == uint32(libvirt.DomainControlOccupied) || st == uint32(libvirt.DomainControlJob)) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// TestConfirmedTakeOnQEMU: a take of a real guest's disk and memory whose
// work is killed part way (the guest's QEMU killed while libvirt saves the
// checkpoint) is never ready: the take ends failed, the backend lists no
// snapshot of it as ready, and its delete finishes the clean-up, leaving no
// internal snapshot of it in the guest's disk. The guest then boots, and
// its next take is ready, holding the file the guest wrote before the cut.
func TestConfirmedTakeOnQEMU(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var armed atomic.Bool
	var cut atomic.Bool
	var l *libvirt.Libvirt
	var ref string
	var pid int
	b, cfg := newBackendConfig(t, func(c *qemu.Config) {
		c.Hook = func(point string) {
			if point == "take:prepared" && armed.CompareAndSwap(true, false) {
				if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
					return
				}
				go func() { cut.Store(killMidTake(l, pid, ref)) }()
			}
		}
	})
	env := newCore(t, b)
	box, err := env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "cut-owl", Kind: qemu.KindLinux, Backend: b.ID(), Template: template})
	if err != nil {
		t.Fatalf("AcquireBox: %v", err)
	}
	g := providers.Guest{Backend: b.ID(), Kind: qemu.KindLinux, Ref: box.GuestRef, Generation: 1}
	boot(t, b, g)
	sh(t, b, g, "printf 'before the cut' > /root/state && sync")
	l, ref, pid = virsh(t), g.Ref, qemuPID(t, g.Ref)

	armed.Store(true)
	op, sn, err := env.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: box.Name, Name: "cut short", Memory: true})
	if err != nil {
		t.Fatalf("take: %v", err)
	}
	got := waitOp(t, env, op.ID)
	if !cut.Load() {
		t.Fatalf("the guest's QEMU was not killed during the take, which ended %s", got.State)
	}
	cutSn, _, err := env.Core.Snapshot(ctx, snapshots.Owner(), sn.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State == snapshots.OpDone || cutSn.State == snapshots.StateReady {
		t.Fatalf("a take whose guest was killed part way ended %s, its snapshot %s; want never ready", got.State, cutSn.State)
	}
	if cutSn.State != snapshots.StateFailed && cutSn.State != snapshots.StateIncomplete {
		t.Fatalf("the take cut short is %s, want failed or incomplete", cutSn.State)
	}
	held, err := b.HeldSnapshots(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range held {
		if h.Label.Snapshot == sn.ID && !h.Incomplete {
			t.Fatalf("the backend lists the take cut short as complete: %+v", h)
		}
	}
	disk := filepath.Join(cfg.Dir, g.Ref+".qcow2")
	t.Logf("after the cut the guest's disk holds:\n%s", internalSnapshots(t, disk))

	dop, err := env.Keeps.Delete(ctx, snapshots.Owner(), snapshots.DeleteRequest{Box: box.Name, Snapshot: sn.ID})
	if err != nil {
		t.Fatalf("delete the take cut short: %v", err)
	}
	if d := waitOp(t, env, dop.ID); d.State != snapshots.OpDone {
		t.Fatalf("the delete of the take cut short ended %s: %s", d.State, coretest.Deref(d.Error))
	}
	if _, _, err := env.Core.Snapshot(ctx, snapshots.Owner(), sn.ID); err == nil {
		t.Fatal("the deleted take cut short is still recorded")
	}
	if list := internalSnapshots(t, disk); strings.Contains(list, sn.ID) {
		t.Fatalf("the delete left the take cut short in the guest's disk:\n%s", list)
	}

	boot(t, b, g)
	op, sn, err = env.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: box.Name, Name: "after the cut"})
	if err != nil {
		t.Fatalf("take: %v", err)
	}
	if got := waitOp(t, env, op.ID); got.State != snapshots.OpDone {
		t.Fatalf("the take after the cut ended %s: %s", got.State, coretest.Deref(got.Error))
	}
	sn, _, err = env.Core.Snapshot(ctx, snapshots.Owner(), sn.ID)
	if err != nil || sn.State != snapshots.StateReady {
		t.Fatalf("the take after the cut: %+v %v", sn, err)
	}
	var read strings.Builder
	if _, err := b.ReadFile(ctx, providers.SnapshotRef{ID: sn.ID, Ref: sn.Ref, Guest: g}, "root/state", &read); err != nil || read.String() != "before the cut" {
		t.Fatalf("the take after the cut holds %q (%v), want the file the guest wrote", read.String(), err)
	}
}
