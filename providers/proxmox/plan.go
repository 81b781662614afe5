package proxmox

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// Rates measured on Proxmox VE for takes and for each capture order: a time
// in a plan is a rate times what this box holds.
const (
	// TakeLXC and TakeQEMU: a live disk snapshot (0.7 s, 1.1 s).
	TakeLXC  = 700 * time.Millisecond
	TakeQEMU = 1100 * time.Millisecond
	// MemoryPerGiB: "about 1 s per GiB of memory", from a measured 3.7 s for
	// 4 GiB.
	MemoryPerGiB = 925 * time.Millisecond
	// HardStop: boxsnap's own hard stop, 1.3 s.
	HardStop = 1300 * time.Millisecond
	// HeldCopyPer4GiB: a full clone, about 9 s for each 4 GiB used (9.3 s for
	// an LXC's 4 GiB, 6.5 s for QEMU's).
	HeldCopyPer4GiBLXC  = 9300 * time.Millisecond
	HeldCopyPer4GiBQEMU = 6500 * time.Millisecond
	gib                 = 1 << 30
)

// Snapshotting is what Proxmox offers for a kind of guest, with no call to a
// host.
func (b *Backend) Snapshotting(kind string) *providers.Snapshotting {
	s := &providers.Snapshotting{Scope: providers.ScopeBox, WhileRunning: providers.WhileRunningLive,
		Restore: providers.RestoreInPlace, Fork: providers.ForkCopy, KeepsPastRelease: providers.KeepsHeldCopy,
		Lives: providers.LivesHost}
	switch kind {
	case KindLXC:
		s.Holds = []providers.Holds{providers.HoldsDisk}
	case KindQEMU:
		s.Holds = []providers.Holds{providers.HoldsDisk, providers.HoldsDiskAndMemory}
	case KindQEMUWindows:
		// No fork until a unit builds Windows' reset, and so no Keep: a kept
		// copy could not be used.
		s.Holds = []providers.Holds{providers.HoldsDisk}
		s.Fork, s.KeepsPastRelease = providers.ForkNone, providers.KeepsNo
	default:
		return nil
	}
	return s
}

// PlanSnapshots reads the guest's config and its storage's status, and says
// what a take, a restore to snap, a keep and a fork would do now. A locked
// guest's plan says so and comes with a *providers.LockedError.
func (b *Backend) PlanSnapshots(ctx context.Context, g providers.Guest, snap *providers.SnapshotRef) (providers.SnapshotPlan, error) {
	var plan providers.SnapshotPlan
	snapping := b.Snapshotting(g.Kind)
	if snapping == nil {
		return plan, &providers.RefusedError{Why: fmt.Sprintf("Boxes of kind %s take no snapshots on Proxmox.", g.Kind)}
	}
	conf, err := b.readConfig(ctx, g, "")
	if err != nil {
		return plan, err
	}
	if conf.Storage == "" {
		return plan, &providers.RefusedError{Why: fmt.Sprintf("%s has no disk boxsnap can snapshot.", g.Ref)}
	}
	st, err := b.readStorage(ctx, g.Host, conf.Storage)
	if err != nil {
		return plan, err
	}
	plan.Storage = st
	plan.Size = &providers.BoxSize{Cores: conf.Cores, MemoryBytes: conf.Memory, DiskBytes: conf.Disk}

	// The take.
	about := TakeQEMU
	if g.Kind == KindLXC {
		about = TakeLXC
	}
	plan.Take = providers.TakePlan{OK: true, About: about}
	if snapping.OffersMemory() {
		plan.Take.MemoryAbout = about + memoryTime(conf.Memory)
		mb := conf.Memory
		plan.Take.MemoryBytes = &mb
	}
	takes := snapshotsPossible(st.Type, g.Kind, conf.Volume)
	if !takes {
		plan.Take = providers.TakePlan{OK: false, About: about,
			Why: fmt.Sprintf("%s's storage %s (%s) %s.", g.Host, st.Name, st.Type, StorageWords(st.Type))}
	}

	// The restore.
	plan.Restore = b.restorePlan(g, st, conf, takes)
	if snap != nil && snap.Where == "held-copy" {
		b.swapPlan(ctx, g, conf, &plan)
	} else if snap != nil && takes && plan.Restore.Way != providers.WayNone {
		if err := b.planTarget(ctx, g, snap, st, &plan); err != nil {
			return plan, err
		}
	}

	// Keep and fork: a held copy, a full clone.
	copyAbout := heldCopyTime(g.Kind, conf.Disk)
	used := conf.Disk
	switch snapping.KeepsPastRelease {
	case providers.KeepsHeldCopy:
		plan.Keep = providers.KeepPlan{Way: providers.KeepsHeldCopy, About: &copyAbout, Bytes: &used}
	default:
		plan.Keep = providers.KeepPlan{Way: providers.KeepsNo, Why: "No Keep on Windows yet: with no fork, a kept copy could not be used."}
	}
	if snapping.Fork == providers.ForkCopy {
		plan.Fork = providers.ForkPlan{OK: takes, About: copyAbout, Bytes: &used}
	} else {
		plan.Fork = providers.ForkPlan{OK: false, Why: windowsForkWords}
	}
	if conf.Lock != "" {
		lock := providers.Lock{Lock: conf.Lock, Fix: unlockWords(g)}
		plan.Locked = &lock
		return plan, &providers.LockedError{Lock: lock}
	}
	return plan, nil
}

// snapshotsPossible: LVM thick and raw files on a directory take none.
func snapshotsPossible(storageType, kind, volume string) bool {
	switch storageType {
	case "lvmthin", "zfspool", "rbd", "btrfs":
		return true
	case "dir", "nfs", "cifs":
		return kind != KindLXC && strings.HasSuffix(volume, ".qcow2")
	}
	return false
}

func memoryTime(bytes int64) time.Duration {
	return time.Duration(float64(bytes) / gib * float64(MemoryPerGiB))
}

func heldCopyTime(kind string, bytes int64) time.Duration {
	per := HeldCopyPer4GiBQEMU
	if kind == KindLXC {
		per = HeldCopyPer4GiBLXC
	}
	return time.Duration(float64(bytes) / (4 * gib) * float64(per))
}

// restorePlan is the restore's way, undo and capture order on this storage.
func (b *Backend) restorePlan(g providers.Guest, st providers.Storage, conf guestConfig, takes bool) providers.RestorePlan {
	about := TakeQEMU
	if g.Kind == KindLXC {
		about = TakeLXC
	}
	if !takes {
		return providers.RestorePlan{Way: providers.WayNone, Undo: providers.UndoNone,
			Why: fmt.Sprintf("%s's storage %s (%s) %s.", g.Host, st.Name, st.Type, StorageWords(st.Type))}
	}
	way := rollbackRule[st.Type]
	if st.Type == "dir" || st.Type == "nfs" || st.Type == "cifs" {
		way = providers.WayRollback
	}
	p := providers.RestorePlan{Way: way, Undo: providers.UndoSnapshot, UndoAbout: HardStop + about, RestartsProcesses: true,
		Order: []providers.RestoreStep{providers.StepStop, providers.StepUndo, providers.StepRollback, providers.StepStart, providers.StepReadSize}}
	if way == providers.WayRollbackNewestOnly {
		// ZFS: the undo is a held copy of the stopped guest, made after the
		// stop and before the rollback; a snapshot would block the rollback.
		p.Undo = providers.UndoHeldCopy
		p.UndoAbout = HardStop + heldCopyTime(g.Kind, conf.Disk)
		used := conf.Disk
		p.UndoBytes = &used
		if !b.cfg.ZFSOrderForLiveChecksOnly {
			p.Why = fmt.Sprintf("%s uses ZFS, whose restores are off until they are checked live: fork this snapshot instead.", g.Host)
		}
	}
	return p
}

// planTarget reads the target snapshot: whether it exists and is complete,
// how many are newer (ZFS restores only the newest), and the size the box
// goes back to (from the snapshot's config).
func (b *Backend) planTarget(ctx context.Context, g providers.Guest, snap *providers.SnapshotRef, st providers.Storage, plan *providers.SnapshotPlan) error {
	list, err := b.listSnapshots(ctx, g)
	if err != nil {
		return err
	}
	name := snap.Ref
	var target *pveSnapshot
	for i := range list {
		if list[i].Name == name {
			target = &list[i]
		}
	}
	if target == nil {
		plan.Restore.Way, plan.Restore.Why = providers.WayNone, fmt.Sprintf("The snapshot is no longer on %s.", g.Host)
		return nil
	}
	if target.SnapState != "" {
		plan.Restore.Way, plan.Restore.Why = providers.WayNone, fmt.Sprintf("The snapshot is incomplete on %s (snapstate %s): delete it.", g.Host, target.SnapState)
		return nil
	}
	if plan.Restore.Way == providers.WayRollbackNewestOnly {
		newer := 0
		for _, s := range list {
			if s.Name != "current" && s.Name != name && (s.SnapTime > target.SnapTime || s.SnapTime == target.SnapTime && newerThan(list, s.Name, name)) {
				newer++
			}
		}
		if newer > 0 {
			plan.Restore.Why = ZFSRefusal(g.Host, newer)
		}
	}
	sc, err := b.readConfig(ctx, g, name)
	if err == nil {
		plan.Restore.SizeBack = &providers.BoxSize{Cores: sc.Cores, MemoryBytes: sc.Memory, DiskBytes: sc.Disk}
		if target.VMState == 1 {
			plan.Restore.RestartsProcesses = false
		}
	}
	return nil
}

// newerThan reports whether a descends from b in the listing's parent
// chain: a snapshot taken after b on this guest.
func newerThan(list []pveSnapshot, a, bName string) bool {
	parent := map[string]string{}
	for _, s := range list {
		parent[s.Name] = s.Parent
	}
	seen := 0
	for p := parent[a]; p != "" && seen < len(list); p = parent[p] {
		if p == bName {
			return true
		}
		seen++
	}
	return false
}

// ZFSRefusal is the restore's refusal on ZFS past newer snapshots: "pve-3
// uses ZFS, which restores only the newest snapshot. Fork this one, or delete
// the 2 newer ones yourself first."
func ZFSRefusal(host string, newer int) string {
	ones := "ones"
	if newer == 1 {
		ones = "one"
	}
	return fmt.Sprintf("%s uses ZFS, which restores only the newest snapshot. Fork this one, or delete the %d newer %s yourself first.", host, newer, ones)
}

// swapPlan is the plan of a restore to a held copy: a new guest, after the
// current one stops; the snapshots on the current guest stay on it as the
// box's earlier guest. It stays behind the ZFS switch (after the reviews:
// "restoring a held copy, a swap, stays behind the same switch").
func (b *Backend) swapPlan(ctx context.Context, g providers.Guest, conf guestConfig, plan *providers.SnapshotPlan) {
	r := providers.RestorePlan{Way: providers.WayNewGuest, Undo: providers.UndoNone, RestartsProcesses: true,
		UndoAbout: HardStop + heldCopyTime(g.Kind, conf.Disk),
		Order:     []providers.RestoreStep{providers.StepStop, providers.StepAdopt, providers.StepEarlier, providers.StepStart, providers.StepReadSize}}
	if !b.cfg.ZFSOrderForLiveChecksOnly {
		r.Why = "Undoing a restore by a held copy is off until it is checked live on a ZFS node."
	}
	if list, err := b.listSnapshots(ctx, g); err == nil {
		for _, sn := range list {
			if l, ok := ParseLabel(sn.Description); ok && l.Install == b.cfg.Install {
				r.LeavesOnEarlier++
			}
		}
	}
	plan.Restore = r
}

// windowsForkWords are why a Windows box neither forks nor plans a fork:
// its fork would act as its source until Windows has an identity reset.
const windowsForkWords = "Windows boxes do not fork until a unit builds Windows' identity reset."
