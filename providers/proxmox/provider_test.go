package proxmox_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/proxmox"
	"github.com/boxsnap/boxsnap/providers/pvesim"
)

func take(t *testing.T, e *simEnv, g providers.Guest, memory bool) (providers.SnapshotRef, providers.SnapshotTaken) {
	t.Helper()
	id := newID("sn")
	taken, err := e.be.Snapshot(context.Background(), g, providers.SnapshotTake{Label: providers.Label{Install: install, Box: "bxamberfox2q7k", Snapshot: id}, Memory: memory}, nil)
	must(t, err)
	return providers.SnapshotRef{ID: id, Ref: taken.Ref, Guest: g, Storage: taken.Storage}, taken
}

func TestSnapshottingTable(t *testing.T) {
	t.Parallel()
	be, err := proxmox.New(proxmox.Config{ID: "x", URL: "https://127.0.0.1:1", TokenID: tokenID, TokenSecret: tokenSecret, Install: install})
	must(t, err)
	lxc, qemu, win := be.Snapshotting(proxmox.KindLXC), be.Snapshotting(proxmox.KindQEMU), be.Snapshotting(proxmox.KindQEMUWindows)
	if lxc.OffersMemory() || !qemu.OffersMemory() || win.OffersMemory() {
		t.Fatalf("memory: lxc %v qemu %v windows %v; only qemu offers memory", lxc.OffersMemory(), qemu.OffersMemory(), win.OffersMemory())
	}
	if lxc.KeepsPastRelease != providers.KeepsHeldCopy || win.KeepsPastRelease != providers.KeepsNo || win.Fork != providers.ForkNone {
		t.Fatalf("keeps and forks: lxc %+v windows %+v", lxc, win)
	}
	if be.Snapshotting("linux") != nil {
		t.Fatal("a kind Proxmox does not run has snapshots")
	}
}

func TestPlanReadsGuestAndStorage(t *testing.T) {
	t.Parallel()
	e := newSim(t, simOpts{})
	ctx := context.Background()
	g := guest(proxmox.KindQEMU, "pve-1", qemuThin)
	e.sim.ResetCalls()
	plan, err := e.be.PlanSnapshots(ctx, g, nil)
	must(t, err)
	calls := e.sim.Calls()
	if calls["GET /nodes/{node}/{type}/{vmid}/config"] != 1 || calls["GET /nodes/{node}/storage/{storage}/status"] != 1 {
		t.Fatalf("the plan's calls: %v; want one config and one storage status", calls)
	}
	if plan.Storage.Name != "local-lvm" || plan.Storage.Type != "lvmthin" || plan.Storage.PercentFull <= 0 {
		t.Fatalf("storage %+v", plan.Storage)
	}
	if !plan.Take.OK || plan.Take.About != proxmox.TakeQEMU || plan.Take.MemoryAbout < 4*time.Second {
		t.Fatalf("take %+v: 1.1 s, and about 1 s a GiB for 4 GiB of memory", plan.Take)
	}
	want := []providers.RestoreStep{providers.StepStop, providers.StepUndo, providers.StepRollback, providers.StepStart, providers.StepReadSize}
	if plan.Restore.Way != providers.WayRollback || plan.Restore.Undo != providers.UndoSnapshot || !equalSteps(plan.Restore.Order, want) {
		t.Fatalf("restore %+v", plan.Restore)
	}
	if plan.Size == nil || plan.Size.MemoryBytes != 4096<<20 || plan.Size.DiskBytes != 32*gib {
		t.Fatalf("size %+v", plan.Size)
	}

	// Thick LVM takes none, and the plan says so.
	plan, err = e.be.PlanSnapshots(ctx, guest(proxmox.KindLXC, "pve-1", lxcThick), nil)
	must(t, err)
	if plan.Take.OK || !strings.Contains(plan.Take.Why, "takes no snapshots") || plan.Restore.Way != providers.WayNone {
		t.Fatalf("thick LVM plan: take %+v restore %+v", plan.Take, plan.Restore)
	}
}

func TestMemoryOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	e := newSim(t, simOpts{})
	g := guest(proxmox.KindQEMU, "pve-1", qemuThin)
	_, disk := take(t, e, g, false)
	_, mem := take(t, e, g, true)
	if disk.Holds != providers.HoldsDisk || mem.Holds != providers.HoldsDiskAndMemory {
		t.Fatalf("holds: %s without memory, %s with", disk.Holds, mem.Holds)
	}
	if _, err := e.be.Snapshot(context.Background(), guest(proxmox.KindLXC, "pve-1", lxcThin), providers.SnapshotTake{
		Label: providers.Label{Install: install, Box: "bxamberfox2q7k", Snapshot: newID("sn")}, Memory: true}, nil); !errors.Is(err, providers.ErrUnsupported) {
		t.Fatalf("a memory snapshot of a container: %v", err)
	}
}

func TestLabelWords(t *testing.T) {
	t.Parallel()
	until := time.Date(2026, 12, 30, 23, 59, 59, 0, time.UTC)
	l := providers.Label{Install: install, Box: "bxamberfox2q7k", Snapshot: "sn7kq2m9xa4pd00", KeptUntil: &until, ResetVersion: 1}
	d := proxmox.Describe(l)
	if d != "boxsnap install "+install+" box bxamberfox2q7k snapshot sn7kq2m9xa4pd00 kept 2026-12-30T23:59:59Z reset 1" {
		t.Fatalf("description %q", d)
	}
	back, ok := proxmox.ParseLabel(d)
	if !ok || back.Snapshot != l.Snapshot || !back.KeptUntil.Equal(until) || back.ResetVersion != 1 {
		t.Fatalf("parsed %+v %v", back, ok)
	}
	if _, ok := proxmox.ParseLabel("You are here!"); ok {
		t.Fatal("a description boxsnap did not write parsed as a label")
	}
	name, err := proxmox.SnapshotName("sn7kq2m9xa4pd00")
	if err != nil || name != "bxsn7kq2m9xa4pd00" {
		t.Fatalf("name %q %v", name, err)
	}
	if _, err := proxmox.SnapshotName(strings.Repeat("x", 40)); err == nil {
		t.Fatal("a name past 40 characters was accepted")
	}
}

// TestLockWords: a guest left with lock: rollback refuses take and restore
// with "Run pct unlock 214 on pve-1", in the plan, the take and the doctor.
func TestLockWords(t *testing.T) {
	t.Parallel()
	e := newSim(t, simOpts{})
	ctx := context.Background()
	env := newCore(t, e, "", nil)
	adopt(t, env, "amber-fox", proxmox.KindLXC, lxcThin)
	sn := takeDone(t, env, snapshots.Owner(), "amber-fox", "before")
	g := guest(proxmox.KindLXC, "pve-1", lxcThin)
	ref := providers.SnapshotRef{ID: sn.ID, Ref: sn.Ref, Guest: g}
	must(t, e.sim.SetLock(lxcThin, "rollback"))
	const fix = "Run pct unlock 214 on pve-1"

	// The core's refusals, as the page and the tools show them.
	_, _, err := env.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: "amber-fox"})
	if err == nil || err.Error() != "pve-lab left amber-fox locked (rollback). "+fix+"." {
		t.Fatalf("take of a locked guest through the core: %v", err)
	}
	_, err = env.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "amber-fox", Snapshot: sn.ID})
	if err == nil || !strings.Contains(err.Error(), fix) {
		t.Fatalf("restore of a locked guest through the core: %v", err)
	}

	plan, err := e.be.PlanSnapshots(ctx, g, &ref)
	var le *providers.LockedError
	if !errors.As(err, &le) || le.Lock.Fix != fix || le.Lock.Lock != "rollback" || plan.Locked == nil || plan.Locked.Fix != fix {
		t.Fatalf("plan of a locked guest: %+v, %v", plan.Locked, err)
	}
	_, err = e.be.Snapshot(ctx, g, providers.SnapshotTake{Label: providers.Label{Install: install, Box: "bxamberfox2q7k", Snapshot: newID("sn")}}, nil)
	if !errors.As(err, &le) || le.Lock.Fix != fix {
		t.Fatalf("take of a locked guest: %v", err)
	}
	_, err = e.be.RestoreSnapshot(ctx, g, ref, providers.StepRollback, nil)
	if !errors.As(err, &le) || le.Lock.Fix != fix {
		t.Fatalf("rollback of a locked guest: %v", err)
	}
	var words []string
	for _, c := range e.be.Doctor(ctx) {
		if !c.OK {
			words = append(words, c.Detail+" fix: "+c.Fix)
		}
	}
	if !strings.Contains(strings.Join(words, "\n"), fix) {
		t.Fatalf("the doctor does not say %q: %v", fix, words)
	}
	// QEMU says qm.
	must(t, e.sim.SetLock(qemuThin, "snapshot"))
	_, err = e.be.PlanSnapshots(ctx, guest(proxmox.KindQEMU, "pve-1", qemuThin), nil)
	if !errors.As(err, &le) || le.Lock.Fix != "Run qm unlock 215 on pve-1" {
		t.Fatalf("QEMU lock words: %v", err)
	}
}

// TestZFSRestoresNewestOnly: on ZFS an older target is refused saying ZFS
// restores only the newest snapshot, and with the switch off every ZFS
// restore is off.
func TestZFSRestoresNewestOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, on := range []bool{false, true} {
		e := newSim(t, simOpts{zfsOn: on})
		g := guest(proxmox.KindLXC, "pve-2", lxcZFS)
		old, _ := take(t, e, g, false)
		take(t, e, g, false)
		newest, _ := take(t, e, g, false)
		plan, err := e.be.PlanSnapshots(ctx, g, &old)
		must(t, err)
		want := "pve-2 uses ZFS, which restores only the newest snapshot. Fork this one, or delete the 2 newer ones yourself first."
		if plan.Restore.Why != want || plan.Restore.Way != providers.WayRollbackNewestOnly || plan.Restore.Undo != providers.UndoHeldCopy {
			t.Fatalf("switch %v: older ZFS target: %+v", on, plan.Restore)
		}
		plan, err = e.be.PlanSnapshots(ctx, g, &newest)
		must(t, err)
		if on && plan.Restore.Why != "" || !on && !strings.Contains(plan.Restore.Why, "off until") {
			t.Fatalf("switch %v: newest ZFS target: why %q", on, plan.Restore.Why)
		}
	}
}

// TestTokenNeverShown: the token's secret is in no error, no log line and no
// doctor's words, even when the host refuses it.
func TestTokenNeverShown(t *testing.T) {
	t.Parallel()
	e := newSim(t, simOpts{})
	var logs bytes.Buffer
	be, err := proxmox.New(proxmox.Config{ID: "pve-lab", URL: e.url, TokenID: tokenID, TokenSecret: "ffffffff-0000-4000-8000-000000000bad",
		CAPool: e.sim.CertPool(), Install: install, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	must(t, err)
	ctx := context.Background()
	var seen []string
	_, err = be.PlanSnapshots(ctx, guest(proxmox.KindLXC, "pve-1", lxcThin), nil)
	seen = append(seen, errString(err))
	_, err = be.HeldSnapshots(ctx)
	seen = append(seen, errString(err))
	for _, c := range be.Doctor(ctx) {
		seen = append(seen, c.Detail, c.Fix)
	}
	seen = append(seen, logs.String(), be.String())
	all := strings.Join(seen, "\n")
	if strings.Contains(all, "ffffffff-0000") || strings.Contains(all, tokenSecret) {
		t.Fatalf("the secret shows: %s", all)
	}
	if !strings.Contains(all, "401") {
		t.Fatalf("a refused token is not said: %s", all)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestTLSVerifiedByDefault: a backend with no CA for the simulator refuses
// its certificate; only the setting named InsecureSkipTLSVerify skips it.
func TestTLSVerifiedByDefault(t *testing.T) {
	t.Parallel()
	e := newSim(t, simOpts{})
	ctx := context.Background()
	be, err := proxmox.New(proxmox.Config{ID: "pve-lab", URL: e.url, TokenID: tokenID, TokenSecret: tokenSecret, Install: install})
	must(t, err)
	if _, err := be.HeldSnapshots(ctx); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("an unverified certificate was accepted: %v", err)
	}
	be, err = proxmox.New(proxmox.Config{ID: "pve-lab", URL: e.url, TokenID: tokenID, TokenSecret: tokenSecret, Install: install, InsecureSkipTLSVerify: true})
	must(t, err)
	if _, err := be.HeldSnapshots(ctx); err != nil {
		t.Fatalf("with InsecureSkipTLSVerify: %v", err)
	}
}

// TestDoctorRightsAndStorages names a missing right and each storage's rule.
func TestDoctorRightsAndStorages(t *testing.T) {
	t.Parallel()
	e := newSim(t, simOpts{noAudit: true})
	var text []string
	for _, c := range e.be.Doctor(context.Background()) {
		text = append(text, c.Name+": "+c.Detail+" / "+c.Fix)
	}
	all := strings.Join(text, "\n")
	for _, want := range []string{"lacks Sys.Audit on /nodes", "local-lvm (lvmthin) restores any snapshot", "local-zfs (zfspool) restores only the newest snapshot",
		"thick (lvm) takes no snapshots"} {
		if !strings.Contains(all, want) {
			t.Errorf("the doctor does not say %q:\n%s", want, all)
		}
	}
}

// TestTasksPolledAtOwnPace: a take answers in well under the client's 2 s
// wait, and its UPID is recorded before the wait.
func TestTasksPolledAtOwnPace(t *testing.T) {
	t.Parallel()
	e := newSim(t, simOpts{})
	rec := &recorder{}
	start := time.Now()
	_, err := e.be.Snapshot(context.Background(), guest(proxmox.KindLXC, "pve-1", lxcThin),
		providers.SnapshotTake{Label: providers.Label{Install: install, Box: "bxamberfox2q7k", Snapshot: newID("sn")}}, rec)
	must(t, err)
	if len(rec.tasks) != 1 || !strings.HasPrefix(rec.tasks[0].ID, "UPID:pve-1:") || !strings.Contains(rec.tasks[0].ID, ":vzsnapshot:214:") {
		t.Fatalf("recorded %+v", rec.tasks)
	}
	if d := time.Since(start); d >= 2*time.Second {
		t.Fatalf("a %d ms task took %s: polled at the client's pace", simTaskMS, d)
	}
	out, err := e.be.ProviderTask(context.Background(), rec.tasks[0])
	must(t, err)
	if out.Running || !out.OK || out.ExitStatus != "OK" {
		t.Fatalf("ProviderTask %+v", out)
	}
}

type recorder struct{ tasks []providers.TaskRef }

func (r *recorder) TaskStarted(_ context.Context, task providers.TaskRef) error {
	r.tasks = append(r.tasks, task)
	return nil
}

func equalSteps(a, b []providers.RestoreStep) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

var _ = pvesim.StorageLVMThin
