package proxmox

import (
	"context"
	"fmt"
	"math"
	"strconv"
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

// guestConfig is what a plan reads of a guest's config.
type guestConfig struct {
	raw      map[string]any
	Lock     string
	Parent   string
	Storage  string
	Volume   string
	Disk     int64
	Memory   int64
	Cores    int
	Template bool
}

func (b *Backend) readConfig(ctx context.Context, g providers.Guest, snapshot string) (guestConfig, error) {
	path := guestPath(g) + "/config"
	if snapshot != "" {
		path += "?snapshot=" + snapshot
	}
	var raw map[string]any
	if err := b.api.get(ctx, path, &raw); err != nil {
		return guestConfig{}, fmt.Errorf("read %s's config: %w", g.Ref, err)
	}
	return parseConfig(g.Kind, raw), nil
}

func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatInt(int64(x), 10)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// parseConfig reads the root disk (LXC rootfs; QEMU's first disk that is not
// a CD-ROM), its storage and size, memory, cores, lock and parent.
func parseConfig(kind string, raw map[string]any) guestConfig {
	c := guestConfig{raw: raw, Lock: str(raw["lock"]), Parent: str(raw["parent"]), Template: str(raw["template"]) == "1"}
	keys := []string{"rootfs"}
	if kind != KindLXC {
		keys = []string{"scsi0", "virtio0", "sata0", "ide0", "scsi1", "virtio1"}
	}
	for _, k := range keys {
		v := str(raw[k])
		if v == "" || strings.Contains(v, "media=cdrom") {
			continue
		}
		vol, opts, _ := strings.Cut(v, ",")
		c.Storage, c.Volume, _ = strings.Cut(vol, ":")
		for _, o := range strings.Split(opts, ",") {
			if sz, ok := strings.CutPrefix(o, "size="); ok {
				c.Disk = parseSize(sz)
			}
		}
		break
	}
	if m, err := strconv.ParseInt(str(raw["memory"]), 10, 64); err == nil {
		c.Memory = m << 20
	} else if kind != KindLXC {
		c.Memory = 512 << 20 // QEMU's default
	}
	c.Cores, _ = strconv.Atoi(str(raw["cores"]))
	if c.Cores == 0 {
		c.Cores = 1
	}
	return c
}

// parseSize reads Proxmox's sizes: "8G", "512M", "32T", bytes.
func parseSize(s string) int64 {
	if s == "" {
		return 0
	}
	mult := int64(1)
	switch s[len(s)-1] {
	case 'K', 'k':
		mult = 1 << 10
	case 'M', 'm':
		mult = 1 << 20
	case 'G', 'g':
		mult = 1 << 30
	case 'T', 't':
		mult = 1 << 40
	}
	if mult > 1 {
		s = s[:len(s)-1]
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0
	}
	return int64(f * float64(mult))
}

// storageStatus is GET /nodes/{node}/storage/{storage}/status.
type storageStatus struct {
	Type   string `json:"type"`
	Total  int64  `json:"total"`
	Used   int64  `json:"used"`
	Avail  int64  `json:"avail"`
	Active int    `json:"active"`
}

func (b *Backend) readStorage(ctx context.Context, node, storage string) (providers.Storage, error) {
	var st storageStatus
	if err := b.api.get(ctx, fmt.Sprintf("/nodes/%s/storage/%s/status", node, storage), &st); err != nil {
		return providers.Storage{}, fmt.Errorf("read storage %s on %s: %w", storage, node, err)
	}
	b.mu.Lock()
	typ, known := b.stor[node+"/"+storage]
	if !known {
		// The type is read once per storage, at its first status.
		b.stor[node+"/"+storage] = st.Type
		typ = st.Type
	}
	b.mu.Unlock()
	out := providers.Storage{Name: storage, Type: typ, FreeBytes: st.Avail}
	if st.Total > 0 {
		out.PercentFull = math.Round(float64(st.Used)/float64(st.Total)*1000) / 10
	}
	if typ == "lvmthin" {
		out.MetadataPercentFull = b.thinMetadata(ctx, node)
	}
	return out, nil
}

// thinMetadata reads the thin pool's metadata use where the token may read
// it (Sys.Audit on /); nil where it may not.
func (b *Backend) thinMetadata(ctx context.Context, node string) *float64 {
	var pools []struct {
		MetadataSize int64 `json:"metadata_size"`
		MetadataUsed int64 `json:"metadata_used"`
	}
	if err := b.api.get(ctx, "/nodes/"+node+"/disks/lvmthin", &pools); err != nil {
		return nil
	}
	worst := -1.0
	for _, p := range pools {
		if p.MetadataSize > 0 {
			worst = max(worst, math.Round(float64(p.MetadataUsed)/float64(p.MetadataSize)*1000)/10)
		}
	}
	if worst < 0 {
		return nil
	}
	return &worst
}

// rollbackAny are the storage types whose rollback may go past newer
// snapshots (PS plugins' volume_rollback_is_possible).
var rollbackRule = map[string]providers.RestoreWay{
	"lvmthin": providers.WayRollback, "rbd": providers.WayRollback, "btrfs": providers.WayRollback,
	"dir": providers.WayRollback, "nfs": providers.WayRollback, "cifs": providers.WayRollback,
	"zfspool": providers.WayRollbackNewestOnly,
}

// StorageWords says what a storage type restores, for the doctor and the
// plan.
func StorageWords(typ string) string {
	switch rollbackRule[typ] {
	case providers.WayRollback:
		return "restores any snapshot"
	case providers.WayRollbackNewestOnly:
		return "restores only the newest snapshot"
	}
	switch typ {
	case "lvm":
		return "takes no snapshots of boxsnap's guests (LVM thick)"
	case "dir", "nfs", "cifs":
		return "takes snapshots of qcow2 disks only"
	}
	return "takes no snapshots"
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
		plan.Fork = providers.ForkPlan{OK: false, Why: "Windows boxes do not fork until a unit builds Windows' identity reset."}
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
