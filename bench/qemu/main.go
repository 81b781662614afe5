// Command qemu measures the QEMU backend against the same work done by hand
// with virsh, in one run on one private libvirtd and one guest of -memory
// MiB of memory and a 1 GiB disk (the test guest, built from Debian's
// packages into .cache), holding -fill MiB of random data: a disk take (the
// guest stopped), a memory take (the guest running, paused while libvirt
// saves it), and a restore of each. By hand is what a person would type:
// virsh snapshot-create-as for a take; virsh snapshot-revert --running for
// a memory restore; virsh destroy, snapshot-revert and start for a disk
// restore. A restore is the backend's own steps in its order (the undo and
// the access are the core's, and are left out). The two sides alternate,
// on the same guest; medians of -runs. It says whether KVM or TCG ran.
//
//	go run ./bench/qemu -runs 3
//
// It needs root, libvirtd and QEMU (Debian's libvirt-daemon-system,
// libvirt-clients, qemu-system-x86, qemu-utils), as the QEMU tests do.
package main

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/qemu"
	"github.com/boxsnap/boxsnap/providers/qemu/qemutest"
)

const install = "in7benchqemu01"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench/qemu:", err)
		os.Exit(1)
	}
}

// failed carries a failure up to run, through the deferred clean-ups.
type failed struct{ err error }

func run() (err error) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(failed)
			if !ok {
				panic(r)
			}
			err = f.err
		}
	}()
	runs := flag.Int("runs", 3, "runs of each measure")
	memory := flag.Int("memory", 256, "the guest's memory in MiB")
	fill := flag.Int("fill", 128, "MiB of random data written into the guest's disk")
	accel := flag.String("accel", qemu.AccelTCG, "kvm or tcg")
	flag.Parse()
	ctx := context.Background()
	d, err := qemutest.StartLibvirtd(os.TempDir())
	if err != nil {
		fail(err)
	}
	defer d.Stop()
	cache, err := qemutest.CacheDir()
	if err != nil {
		fail(err)
	}
	files, err := qemutest.BuildGuest(ctx, cache)
	if err != nil {
		fail(err)
	}
	dir, err := os.MkdirTemp("", "bsqb-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	b, err := qemu.New(qemu.Config{ID: "bench", Socket: d.Socket, Install: install, Dir: dir, Accel: *accel,
		Templates: map[string]qemu.Template{"busybox": {Kernel: files.Kernel, Initrd: files.Initrd, Disk: files.Disk, Cmdline: files.Cmdline,
			MemoryMiB: *memory, CPUs: 1, ResetVersion: qemutest.ResetVersion}}})
	if err != nil {
		fail(err)
	}
	defer b.Close()
	box := id("bx")
	g, err := b.Acquire(ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: box, Name: box, Kind: qemu.KindLinux, Install: install}, Template: "busybox"})
	if err != nil {
		fail(err)
	}
	defer func() { _ = b.Release(ctx, g) }()
	vs := func(args ...string) string {
		out, err := exec.Command("virsh", append([]string{"-q", "-c", "qemu:///system?socket=" + d.Socket}, args...)...).CombinedOutput()
		if err != nil {
			fail(fmt.Errorf("virsh %s: %v: %s", strings.Join(args, " "), err, out))
		}
		return strings.TrimSpace(string(out))
	}
	boot(ctx, b, g)
	shell(ctx, b, g, fmt.Sprintf("dd if=/dev/urandom of=/root/data bs=1M count=%d 2>/dev/null && sync", *fill))
	ran := "TCG"
	if x := vs("dumpxml", g.Ref); strings.Contains(x, "type='kvm'") || strings.Contains(x, `type="kvm"`) {
		ran = "KVM"
	}
	fmt.Printf("QEMU backend beside virsh by hand: a guest of %d MiB memory, a 1 GiB disk holding %d MiB of data, %d runs each, medians\n", *memory, *fill, *runs)
	fmt.Printf("accelerator: %s; %s; %s\n", ran, strings.SplitN(vs("version"), "\n", 2)[0], qemuVersion())

	var diskTake, diskHand, memTake, memHand, pause, memRest, memRestHand, diskRest, diskRestHand []time.Duration
	var diskRef, memRef providers.SnapshotRef
	var diskName, memName string
	for run := 0; run < *runs; run++ {
		mine := func(stopped bool) {
			if stopped {
				if err := b.Stop(ctx, g); err != nil {
					fail(err)
				}
			} else {
				running(ctx, b, g)
			}
			sn := id("sn")
			start := time.Now()
			t, err := b.Snapshot(ctx, g, providers.SnapshotTake{Memory: !stopped, Label: providers.Label{Install: install, Box: box, Snapshot: sn}}, nil)
			took := time.Since(start)
			if err != nil {
				fail(err)
			}
			ref := providers.SnapshotRef{ID: sn, Ref: t.Ref, Guest: g, Storage: t.Storage}
			if stopped {
				diskTake, diskRef = append(diskTake, took), ref
			} else {
				memTake, memRef, pause = append(memTake, took), ref, append(pause, t.Paused)
			}
		}
		hand := func(stopped bool) {
			if stopped {
				if err := b.Stop(ctx, g); err != nil {
					fail(err)
				}
			} else {
				running(ctx, b, g)
			}
			name := id("hand")
			start := time.Now()
			vs("snapshot-create-as", g.Ref, name)
			took := time.Since(start)
			if stopped {
				diskHand, diskName = append(diskHand, took), name
			} else {
				memHand, memName = append(memHand, took), name
			}
		}
		both(run, func() { mine(true) }, func() { hand(true) })
		both(run, func() { mine(false) }, func() { hand(false) })

		both(run, func() {
			running(ctx, b, g)
			memRest = append(memRest, restore(ctx, b, g, memRef))
		}, func() {
			running(ctx, b, g)
			start := time.Now()
			vs("snapshot-revert", g.Ref, memName, "--running")
			memRestHand = append(memRestHand, time.Since(start))
		})
		both(run, func() {
			running(ctx, b, g)
			diskRest = append(diskRest, restore(ctx, b, g, diskRef))
		}, func() {
			running(ctx, b, g)
			start := time.Now()
			vs("destroy", g.Ref)
			vs("snapshot-revert", g.Ref, diskName)
			vs("start", g.Ref)
			diskRestHand = append(diskRestHand, time.Since(start))
		})
	}
	row := func(what string, mine, hand []time.Duration) {
		m, h := median(mine), median(hand)
		fmt.Printf("%-16s boxsnap %8s   virsh %8s   ratio %.2f\n", what, m.Round(time.Millisecond), h.Round(time.Millisecond), float64(m)/float64(h))
	}
	row("disk take", diskTake, diskHand)
	row("memory take", memTake, memHand)
	row("memory restore", memRest, memRestHand)
	row("disk restore", diskRest, diskRestHand)
	fmt.Printf("%-16s %s (the running guest paused while libvirt saved its disk and memory)\n", "pause of a take", median(pause).Round(time.Millisecond))
	return nil
}

// both runs the two sides of one measure, the backend first on even runs
// and virsh first on odd ones.
func both(run int, mine, hand func()) {
	if run%2 == 0 {
		mine()
		hand()
	} else {
		hand()
		mine()
	}
}

// restore runs the backend's steps of the plan's restore of ref (the undo
// and the access are the core's) and answers how long they took.
func restore(ctx context.Context, b *qemu.Backend, g providers.Guest, ref providers.SnapshotRef) time.Duration {
	plan, err := b.PlanSnapshots(ctx, g, &ref)
	if err != nil {
		fail(err)
	}
	start := time.Now()
	for _, step := range plan.Restore.Order {
		if step == providers.StepUndo || step == providers.StepAccess {
			continue
		}
		if _, err := b.RestoreSnapshot(ctx, g, ref, step, nil); err != nil {
			fail(fmt.Errorf("restore step %s: %w", step, err))
		}
	}
	return time.Since(start)
}

// boot starts the guest and waits for its ready line.
func boot(ctx context.Context, b *qemu.Backend, g providers.Guest) {
	n := len(qemutest.Boots(b.ConsoleLog(g)))
	if err := b.Start(ctx, g); err != nil {
		fail(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if _, err := qemutest.WaitBoot(wctx, b.ConsoleLog(g), n); err != nil {
		fail(err)
	}
}

// running starts the guest where it is stopped, up to its ready line.
func running(ctx context.Context, b *qemu.Backend, g providers.Guest) {
	on, err := b.Runs(ctx, g)
	if err != nil {
		fail(err)
	}
	if !on {
		boot(ctx, b, g)
	}
}

func shell(ctx context.Context, b *qemu.Backend, g providers.Guest, cmd string) {
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	out, code, err := qemutest.Shell(wctx, b.SerialSocket(g), cmd)
	if err != nil || code != 0 {
		fail(fmt.Errorf("in the guest, %q: %v (exit %d): %s", cmd, err, code, out))
	}
}

func qemuVersion() string {
	out, err := exec.Command("qemu-system-x86_64", "--version").Output()
	if err != nil {
		return "qemu-system-x86_64 unknown"
	}
	return strings.SplitN(strings.TrimSpace(string(out)), "\n", 2)[0]
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func id(prefix string) string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = letters[int(b[i])%len(letters)]
	}
	return prefix + string(b)
}

// fail ends the run with err, its clean-ups done.
func fail(err error) { panic(failed{err}) }
