// Command qemu measures the QEMU backend against the same work done by hand
// with virsh, in one run on one private libvirtd and one guest of -memory
// MiB of memory and a 1 GiB disk (the test guest, built from Debian's
// packages into .cache), holding -fill MiB of random data: a disk take (the
// guest stopped), a memory take (the guest running, booted afresh before
// each side's, paused while libvirt saves it), and a restore of each. By
// hand is what a person would type: virsh snapshot-create-as for a take;
// for a restore, the plan's order by hand: virsh destroy for the stop,
// snapshot-create-as for the undo, snapshot-revert (--running for a memory
// restore) and start. A restore is its undo, taken as the core takes it (a
// take without memory asked, named by a fresh label), and the backend's own
// steps, in the plan's order; the access, the core's, is left out. Each
// side's undos are deleted after its restore, untimed. The two sides alternate,
// on the same guest; medians of -runs, each run's figures, and the median
// of each run's ratio. It says whether KVM or TCG ran (the backend's own
// choice, as boxsnap makes it: -accel auto unless told), and what virsh's own
// start and connect cost (a virsh domstate), which each of its figures
// holds and the backend, connected already, does not pay.
//
// The two sides of a memory restore do the same work: boxsnap's steps are,
// in the plan's order, the stop (a lookup and a destroy), the undo (a take
// of the stopped guest, its disk alone), the revert (it finds the domain
// and the snapshot, reads the snapshot's XML to know it holds memory, and
// reverts it running: one DomainRevertToSnapshot, in which libvirt starts
// a new QEMU loading the snapshot) and the size read back (the domain's
// XML and its disk's capacity from the qcow2's header, a few
// milliseconds); virsh's are processes started and connected, each with
// the same lookups and the same call. Both return once the guest runs
// again from the snapshot's moment, its processes with it; neither checks
// more, and neither writes the access (the core's step, a 64 KiB file
// written before the revert). Both revert the same snapshot, the backend's
// memory take of the run: two takes moments apart hold different memory
// (one caught at the end of a boot), and what a guest does once resumed
// weighs on the revert's end.
//
// The two sides of a disk restore do the same work too: each stops the
// same guest, booted afresh up to its ready line just before, and reverts
// the same snapshot, the backend's disk take of the run. boxsnap's steps
// are the stop (a lookup and a destroy), the undo, the revert (the
// lookups, the snapshot's XML, the revert), the start (a lookup and a
// create) and the size read back (the domain's XML and the disk's header);
// virsh's are four processes, each started and connected, each with its
// lookup and its call. Both return once libvirt's create returns: QEMU
// started and its virtual CPU running, the guest's kernel just beginning
// its boot; neither waits for the boot. Libvirt's destroy and its create,
// the same calls on both sides, are nearly all of either's time (-steps).
//
// With -steps it prints, for each restore, how long each of boxsnap's
// steps took and each libvirt call within them (the backend's debug
// lines), and each of virsh's commands.
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
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
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
	accel := flag.String("accel", accelSetting(), "auto (the backend's own choice: KVM where guests run under it here, else TCG), kvm or tcg; BOXSNAP_QEMU_ACCEL, as boxsnap reads it, when set")
	steps := flag.Bool("steps", false, "print how long each step of each restore took, each libvirt call of boxsnap's steps and each virsh command (the backend's debug lines)")
	flag.Parse()
	calls := &callLog{}
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
	b, err := qemu.New(qemu.Config{ID: "bench", Socket: d.Socket, Install: install, Dir: dir, Accel: *accel, Logger: slog.New(calls),
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
	// In pieces of 4 MiB, each synced: the serial shell cuts a command
	// still running after 5 s and sends it again, and 128 MiB at once took
	// longer than that under load (TCG).
	for at := 0; at < *fill; at += 4 {
		shell(ctx, b, g, fmt.Sprintf("dd if=/dev/urandom of=/root/data bs=1M seek=%d count=%d conv=notrunc,fsync 2>/dev/null", at, min(4, *fill-at)))
	}
	// The accelerator the backend chose, and the one the guest's domain
	// says it runs under: they agree, or the figures would not be the
	// product's.
	choice := b.AccelChoice(ctx)
	ran := qemu.AccelTCG
	if x := vs("dumpxml", g.Ref); strings.Contains(x, "type='kvm'") || strings.Contains(x, `type="kvm"`) {
		ran = qemu.AccelKVM
	}
	if ran != choice.Accel {
		fail(fmt.Errorf("the backend chose %s, but the guest's domain runs under %s", choice.Accel, ran))
	}
	fmt.Printf("QEMU backend beside virsh by hand: a guest of %d MiB memory, a 1 GiB disk holding %d MiB of data, %d runs each, medians\n", *memory, *fill, *runs)
	fmt.Printf("accelerator: %s, as the backend chose it (set to %s): %s\n%s; %s\n", strings.ToUpper(ran), choice.Asked, choice.Why,
		strings.SplitN(vs("version"), "\n", 2)[0], qemuVersion())

	m := &measures{ctx: ctx, b: b, g: g, box: box, vs: vs, calls: calls}
	// The figures are printed however the runs end: a run that fails (a
	// boot past its wait on a loaded machine) leaves the runs before it.
	defer m.print(*steps)
	for run := 0; run < *runs; run++ {
		m.run(run)
		fmt.Fprintf(os.Stderr, "run %d of %d done\n", run+1, *runs)
	}
	return nil
}

// print writes the medians, their ratios and each run's figures; with
// steps, each step's, call's and command's too.
func (m *measures) print(steps bool) {
	row := func(what string, mine, hand []time.Duration) {
		a, h := median(mine), median(hand)
		fmt.Printf("%-16s boxsnap %8s   virsh %8s   ratio %.2f   run by run %.2f\n", what, a.Round(time.Millisecond), h.Round(time.Millisecond),
			float64(a)/float64(h), pairedRatio(mine, hand))
		fmt.Printf("%-16s boxsnap %s (mean %s)\n%-16s virsh   %s (mean %s)\n", "", each(mine), mean(mine).Round(time.Millisecond),
			"", each(hand), mean(hand).Round(time.Millisecond))
	}
	fmt.Printf("%-16s %s (virsh's own start and connect, a virsh domstate, within each of its figures)\n", "virsh alone", median(m.virshAlone).Round(time.Millisecond))
	row("disk take", m.diskTake, m.diskHand)
	row("memory take", m.memTake, m.memHand)
	row("memory restore", m.memRest, m.memRestHand)
	row("disk restore", m.diskRest, m.diskRestHand)
	fmt.Printf("%-16s %s (the running guest paused while libvirt saved its disk and memory)\n", "pause of a take", median(m.pause).Round(time.Millisecond))
	if steps {
		m.calls.print()
	}
}

// measures are one guest's measures, both sides, run by run.
type measures struct {
	ctx context.Context
	b   *qemu.Backend
	g   providers.Guest
	box string
	vs  func(args ...string) string
	// calls holds each step's and each call's times, by measure.
	calls *callLog

	diskTake, diskHand, memTake, memHand, pause, memRest, memRestHand, diskRest, diskRestHand, virshAlone []time.Duration
	diskRef, memRef                                                                                       providers.SnapshotRef
}

// run measures each thing once on each side, alternating which goes first.
func (m *measures) run(run int) {
	start := time.Now()
	m.vs("domstate", m.g.Ref)
	m.virshAlone = append(m.virshAlone, time.Since(start))
	both(run, func() { m.mine(true) }, func() { m.hand(true) })
	both(run, func() { m.mine(false) }, func() { m.hand(false) })
	// The guest is reverted once, untimed, before the pair: so each side's
	// revert stops a QEMU that itself came from a revert moments before,
	// where the second of a pair otherwise stopped one such and the first
	// one that had run since the takes (measured: the second of a pair was
	// up to 1.5 times slower, whichever side it was).
	running(m.ctx, m.b, m.g)
	m.vs("snapshot-revert", m.g.Ref, m.memRef.Ref, "--running")
	both(run, func() {
		running(m.ctx, m.b, m.g)
		m.memRest = append(m.memRest, m.restore("memory restore", m.memRef))
	}, func() {
		running(m.ctx, m.b, m.g)
		m.memRestHand = append(m.memRestHand, m.restoreByHand("memory restore", m.memRef, true))
	})
	// Each side's disk restore stops a guest booted afresh up to its ready
	// line, and reverts the same snapshot, the backend's disk take of the
	// run. Before, each side stopped the guest the step before left it:
	// the first side a guest resumed from the memory snapshot, the second
	// one the first side had just started, its kernel booting under TCG;
	// and virsh reverted its own disk take.
	both(run, func() {
		m.ready(false)
		m.diskRest = append(m.diskRest, m.restore("disk restore", m.diskRef))
	}, func() {
		m.ready(false)
		m.diskRestHand = append(m.diskRestHand, m.restoreByHand("disk restore", m.diskRef, false))
	})
}

// byHand runs each virsh command in turn and answers how long they took in
// all, recording each one's time under what.
func (m *measures) byHand(what string, cmds ...[]string) time.Duration {
	start := time.Now()
	for _, c := range cmds {
		t := time.Now()
		m.vs(c...)
		m.calls.add(what, "virsh", "virsh "+c[0], time.Since(t))
	}
	return time.Since(start)
}

// order is the plan's restore order of ref.
func (m *measures) order(ref providers.SnapshotRef) []providers.RestoreStep {
	plan, err := m.b.PlanSnapshots(m.ctx, m.g, &ref)
	if err != nil {
		fail(err)
	}
	return plan.Restore.Order
}

// restore runs the plan's restore of ref in its order, its undo taken as
// the core takes it (a take without memory asked) and the backend's steps
// (the access, the core's, left out), and answers how long they took,
// recording each step's time, and each call's (the backend's debug lines),
// under what. The undo is deleted after, untimed.
func (m *measures) restore(what string, ref providers.SnapshotRef) time.Duration {
	order := m.order(ref)
	m.calls.into(what)
	var undo providers.SnapshotRef
	start := time.Now()
	for _, step := range order {
		if step == providers.StepAccess {
			continue
		}
		t := time.Now()
		if step == providers.StepUndo {
			sn := id("un")
			taken, err := m.b.Snapshot(m.ctx, m.g, providers.SnapshotTake{Label: providers.Label{Install: install, Box: m.box, Snapshot: sn}}, nil)
			if err != nil {
				fail(fmt.Errorf("the undo: %w", err))
			}
			undo = providers.SnapshotRef{ID: sn, Ref: taken.Ref, Guest: m.g, Storage: taken.Storage}
		} else if _, err := m.b.RestoreSnapshot(m.ctx, m.g, ref, step, nil); err != nil {
			fail(fmt.Errorf("restore step %s: %w", step, err))
		}
		m.calls.add(what, "boxsnap", "step "+string(step), time.Since(t))
	}
	took := time.Since(start)
	m.calls.into("")
	if undo.Ref != "" {
		if err := m.b.DeleteSnapshot(m.ctx, undo, nil); err != nil {
			fail(fmt.Errorf("delete the undo: %w", err))
		}
	}
	return took
}

// restoreByHand runs the plan's restore of ref by hand, in the same order
// as the backend's: virsh destroy for the stop, snapshot-create-as for the
// undo, snapshot-revert (--running for a memory snapshot) and start; the
// access and the size read back have no virsh command a person would type.
// The undo is deleted after, untimed.
func (m *measures) restoreByHand(what string, ref providers.SnapshotRef, memory bool) time.Duration {
	var cmds [][]string
	undo := ""
	for _, step := range m.order(ref) {
		switch step {
		case providers.StepStop:
			cmds = append(cmds, []string{"destroy", m.g.Ref})
		case providers.StepUndo:
			undo = id("hand")
			cmds = append(cmds, []string{"snapshot-create-as", m.g.Ref, undo})
		case providers.StepRollback:
			revert := []string{"snapshot-revert", m.g.Ref, ref.Ref}
			if memory {
				revert = append(revert, "--running")
			}
			cmds = append(cmds, revert)
		case providers.StepStart:
			cmds = append(cmds, []string{"start", m.g.Ref})
		}
	}
	took := m.byHand(what, cmds...)
	if undo != "" {
		m.vs("snapshot-delete", m.g.Ref, undo)
	}
	return took
}

// ready stops the guest for a disk take, or, for a memory take, boots it
// afresh up to its ready line: so each side's take saves a guest in the
// same state, moments after the same boot. Before, only the first of a pair
// followed a boot and the second followed the other side's take (and on 7
// runs the backend came first 4 times). Not a revert to one snapshot before
// each take: two takes after a revert took 6.4 and 14.3 s here (loaded),
// where takes after a boot had taken 0.2 to 1.8 s: another measure.
func (m *measures) ready(stopped bool) {
	if err := m.b.Stop(m.ctx, m.g); err != nil {
		fail(err)
	}
	if !stopped {
		boot(m.ctx, m.b, m.g)
	}
}

// mine takes a snapshot through the backend.
func (m *measures) mine(stopped bool) {
	m.ready(stopped)
	sn := id("sn")
	start := time.Now()
	t, err := m.b.Snapshot(m.ctx, m.g, providers.SnapshotTake{Memory: !stopped, Label: providers.Label{Install: install, Box: m.box, Snapshot: sn}}, nil)
	took := time.Since(start)
	if err != nil {
		fail(err)
	}
	ref := providers.SnapshotRef{ID: sn, Ref: t.Ref, Guest: m.g, Storage: t.Storage}
	if stopped {
		m.diskTake, m.diskRef = append(m.diskTake, took), ref
	} else {
		m.memTake, m.memRef, m.pause = append(m.memTake, took), ref, append(m.pause, t.Paused)
	}
}

// hand takes a snapshot with virsh snapshot-create-as.
func (m *measures) hand(stopped bool) {
	m.ready(stopped)
	name := id("hand")
	start := time.Now()
	m.vs("snapshot-create-as", m.g.Ref, name)
	took := time.Since(start)
	if stopped {
		m.diskHand = append(m.diskHand, took)
	} else {
		m.memHand = append(m.memHand, took)
	}
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

// pairedRatio is the median of each run's ratio, boxsnap's over virsh's:
// the two sides of a run follow each other, so a load other work puts on
// the machine for a while weighs on both, where the ratio of the medians
// can pair a loaded run of one side with a quiet run of the other.
func pairedRatio(mine, hand []time.Duration) float64 {
	var r []float64
	for i := range min(len(mine), len(hand)) {
		r = append(r, float64(mine[i])/float64(hand[i]))
	}
	if len(r) == 0 {
		return 0
	}
	slices.Sort(r)
	return r[len(r)/2]
}

// each is every run's figure, in the order run.
func each(d []time.Duration) string {
	s := make([]string, len(d))
	for i, x := range d {
		s[i] = x.Round(time.Millisecond).String()
	}
	return strings.Join(s, " ")
}

// mean is the runs' mean: a revert's time falls near one of two values
// (about 2.0 s and 2.9 s here, on both sides), where a median of a few runs
// swings between them.
func mean(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return sum / time.Duration(len(d))
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

// accelSetting is BOXSNAP_QEMU_ACCEL where it is set, as boxsnap reads it,
// else auto: the bench runs guests under the accelerator the product would.
func accelSetting() string {
	if v := os.Getenv("BOXSNAP_QEMU_ACCEL"); v != "" {
		return v
	}
	return qemu.AccelAuto
}

// fail ends the run with err, its clean-ups done.
func fail(err error) { panic(failed{err}) }

// callLog gathers the times of each restore's steps and calls, by measure:
// boxsnap's steps and the libvirt calls within them (the backend's debug
// line "a restore step's calls"), and virsh's commands. It is the backend's
// slog handler: its other lines are dropped.
type callLog struct {
	mu      sync.Mutex
	current string
	order   []string
	times   map[string][]time.Duration
}

// into sets the measure the backend's next debug lines belong to; "" drops
// them (the untimed calls between measures).
func (c *callLog) into(what string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.current = what
}

// add records one time of a step, a call or a command of a side's measure.
func (c *callLog) add(what, side, name string, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := what + "\x00" + side + "\x00" + name
	if c.times == nil {
		c.times = map[string][]time.Duration{}
	}
	if _, ok := c.times[k]; !ok {
		c.order = append(c.order, k)
	}
	c.times[k] = append(c.times[k], d)
}

func (c *callLog) Enabled(context.Context, slog.Level) bool { return true }

func (c *callLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "a restore step's calls" {
		return nil
	}
	c.mu.Lock()
	what := c.current
	c.mu.Unlock()
	if what == "" {
		return nil
	}
	var step string
	var ds []slog.Attr
	r.Attrs(func(a slog.Attr) bool {
		switch {
		case a.Key == "step":
			step = a.Value.String()
		case a.Value.Kind() == slog.KindDuration:
			ds = append(ds, a)
		}
		return true
	})
	for _, a := range ds {
		c.add(what, "boxsnap", "  "+step+": "+a.Key, a.Value.Duration())
	}
	return nil
}

func (c *callLog) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *callLog) WithGroup(string) slog.Handler      { return c }

// print writes each step's, call's and command's median and every run's
// figure, in the order first recorded.
func (c *callLog) print() {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Println("\nsteps (medians; each run's figures):")
	for _, k := range c.order {
		p := strings.SplitN(k, "\x00", 3)
		d := c.times[k]
		fmt.Printf("%-15s %-8s %-28s %9s   %s\n", p[0], p[1], p[2], median(d).Round(10*time.Microsecond), eachFine(d))
	}
}

// eachFine is every run's figure, to the hundredth of a millisecond.
func eachFine(d []time.Duration) string {
	s := make([]string, len(d))
	for i, x := range d {
		s[i] = x.Round(10 * time.Microsecond).String()
	}
	return strings.Join(s, " ")
}
