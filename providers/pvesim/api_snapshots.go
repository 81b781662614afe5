package pvesim

import (
	"sort"
	"strconv"
	"time"
)

// reservedSnapshotName answers Proxmox's refusal of a reserved name, or "".
// "current" is reserved for both types, "vzdump" for LXC (its backups),
// "pending" for QEMU (its pending changes) (PC API2/LXC/Snapshot.pm and QS
// API2/Qemu.pm snapshot).
func reservedSnapshotName(typ GuestType, name string) string {
	if name == "current" || (typ == LXC && name == "vzdump") || (typ == QEMU && name == "pending") {
		return "unable to use snapshot name '" + name + "' (reserved name)"
	}
	return ""
}

// getSnapshots is GET .../{vmid}/snapshot (VM.Audit; GC/QS/PC
// snapshot_list): every snapshot, then "current" with the digest, running
// and "You are here!".
func getSnapshots(c *call) (any, error) {
	if err := c.s.check(c.who, vmPath(c), "VM.Audit"); err != nil {
		return nil, err
	}
	g, err := c.guest()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(g.snaps))
	for n := range g.snaps {
		names = append(names, n)
	}
	// Proxmox leaves the order to a hash; the simulator sorts by time taken
	// so answers repeat.
	sort.Slice(names, func(i, j int) bool { return g.snaps[names[i]].seq < g.snaps[names[j]].seq })
	out := make([]map[string]any, 0, len(names)+1)
	for _, n := range names {
		sn := g.snaps[n]
		item := map[string]any{"name": sn.name, "snaptime": sn.snaptime, "description": sn.description}
		if sn.parent != "" {
			item["parent"] = sn.parent
		}
		if sn.snapstate != "" {
			item["snapstate"] = sn.snapstate
		}
		if g.typ == QEMU && sn.vmstate {
			item["vmstate"] = 1
		}
		out = append(out, item)
	}
	cur := map[string]any{"name": "current", "digest": g.digest(), "running": boolInt(g.running), "description": "You are here!"}
	if p := g.conf["parent"]; p != "" {
		cur["parent"] = p
	}
	return append(out, cur), nil
}

// postSnapshot is POST .../{vmid}/snapshot (VM.Snapshot): refuses reserved
// names at once, then answers a vzsnapshot/qmsnapshot UPID; the task does
// the rest (startSnapshot). LXC has no vmstate parameter: Proxmox refuses
// it as not in the schema.
func postSnapshot(c *call) (any, error) {
	if c.vars["type"] == string(LXC) && c.isSet("vmstate") {
		return nil, paramErr(map[string]string{"vmstate": "property is not defined in schema and the schema does not allow additional properties"})
	}
	if len(c.str("description")) > descriptionMax {
		return nil, paramErr(map[string]string{"description": "value may only be 8192 characters long"})
	}
	if err := c.s.check(c.who, vmPath(c), "VM.Snapshot"); err != nil {
		return nil, err
	}
	g, err := c.guest()
	if err != nil {
		return nil, err
	}
	name := c.str("snapname")
	if msg := reservedSnapshotName(g.typ, name); msg != "" {
		return nil, die("%s", msg)
	}
	return c.s.startSnapshot(g, c.who, name, c.str("description"), c.flag("vmstate")).upid, nil
}

// startSnapshot runs GC AbstractConfig.pm snapshot_create: at once (the
// worker's snapshot_prepare) the checks, lock=snapshot and a section with
// snapstate=prepare; when due (snapshot_commit) snapstate and the lock go
// and the current parent becomes the new snapshot. A failed volume snapshot
// is cleaned up with a forced delete.
func (s *Sim) startSnapshot(g *guest, who *principal, name, description string, vmstate bool) *task {
	typ := "qmsnapshot"
	if g.typ == LXC {
		typ = "vzsnapshot"
	}
	n := s.nodes[g.node]
	t := s.newTask(n, typ, itoa(g.vmid), who, func(t *task, failMsg string) error {
		sn := g.snaps[name]
		if failMsg == "" {
			failMsg = s.fullStorageSnapshotError(g, name)
		}
		if failMsg != "" {
			// snapshot_create's error path: snapshot_delete(force) with the
			// drives, which removes the section and the lock.
			delete(g.snaps, name)
			delete(g.conf, "lock")
			t.log = append(t.log, "snapshot create failed: starting cleanup")
			return errorf("%s", failMsg)
		}
		// GC __snapshot_commit's own checks (someone may have unlocked the
		// guest meanwhile).
		if g.conf["lock"] != LockSnapshot {
			return errorf("missing snapshot lock")
		}
		if sn == nil {
			return errorf("snapshot '%s' does not exist", name)
		}
		sn.snapstate = ""
		delete(g.conf, "lock")
		g.conf["parent"] = name
		return nil
	})
	vol, _ := g.rootVolume()
	st := s.storages[g.node+"/"+vol.storage]
	switch {
	case g.isTemplate():
		s.failTask(t, "you can't take a snapshot if it's a template")
		return t
	case g.conf["lock"] != "":
		s.failTask(t, g.kind()+" is locked ("+g.conf["lock"]+")")
		return t
	case g.snaps[name] != nil:
		s.failTask(t, "snapshot name '"+name+"' already used")
		return t
	case st == nil || !snapshotFeature(st.typ, volumeFormat(vol.volname)):
		s.failTask(t, "snapshot feature is not available")
		return t
	}
	g.conf["lock"] = LockSnapshot
	g.snapSeq++
	sn := &snapshot{
		name:        name,
		description: description,
		parent:      g.conf["parent"],
		snaptime:    s.clock.now().Unix(),
		snapstate:   "prepare",
		conf:        snapshotConf(g.conf),
		written:     g.written,
		seq:         g.snapSeq,
	}
	// vmstate on a stopped VM is ignored (QS QemuConfig.pm
	// __snapshot_save_vmstate runs only for a running VM).
	if g.typ == QEMU && vmstate && g.running {
		sn.vmstate = true
		sn.vmstateVol = vol.storage + ":vm-" + itoa(g.vmid) + "-state-" + name
		mem, _ := strconv.ParseInt(g.conf["memory"], 10, 64)
		sn.unique = mem * mib
	}
	g.snaps[name] = sn
	t.log = append(t.log, "snapshotting '"+g.diskKey()+"' ("+vol.storage+":"+vol.volname+")")
	if g.typ == LXC {
		s.realistic(t, realisticTakeLXC)
	} else {
		s.realistic(t, realisticTakeQEMU+time.Duration(sn.unique*int64(realisticMemoryPerGiB)/gib))
	}
	return t
}

// snapshotConf is the config a snapshot section copies (GC
// AbstractConfig.pm __snapshot_copy_config: not lock, snapshots, pending,
// parent, snapstate, snaptime, vmstate, digest).
func snapshotConf(conf map[string]string) map[string]string {
	out := copyConf(conf)
	for _, k := range []string{"lock", "parent", "snapstate", "snaptime", "vmstate", "digest", "description"} {
		delete(out, k)
	}
	return out
}

// getSnapshotIndex is GET .../snapshot/{snapname} (QS API2/Qemu.pm
// snapshot_cmd_idx): the directory of its subcommands.
func getSnapshotIndex(c *call) (any, error) {
	if err := c.s.check(c.who, vmPath(c), "VM.Audit"); err != nil {
		return nil, err
	}
	if _, err := c.guest(); err != nil {
		return nil, err
	}
	return []map[string]any{{"cmd": "rollback"}, {"cmd": "config"}}, nil
}

// getSnapshotConfig is GET .../snapshot/{snapname}/config (VM.Audit): the
// section's keys with snaptime, description, parent and snapstate.
func getSnapshotConfig(c *call) (any, error) {
	if err := c.s.check(c.who, vmPath(c), "VM.Audit"); err != nil {
		return nil, err
	}
	g, err := c.guest()
	if err != nil {
		return nil, err
	}
	sn := g.snaps[c.vars["snapname"]]
	if sn == nil {
		return nil, die("snapshot '%s' does not exist", c.vars["snapname"])
	}
	return g.confJSON(sn.sectionConf()), nil
}

// putSnapshotConfig is PUT .../snapshot/{snapname}/config (VM.Snapshot;
// GC AbstractConfig.pm update_snapshot_config): description only; a
// locked guest is refused at once. Answers null.
func putSnapshotConfig(c *call) (any, error) {
	if err := c.s.check(c.who, vmPath(c), "VM.Snapshot"); err != nil {
		return nil, err
	}
	if !c.isSet("description") {
		// PC API2/LXC/Snapshot.pm update_snapshot_config: nothing to do.
		return nil, nil
	}
	g, err := c.guest()
	if err != nil {
		return nil, err
	}
	if l := g.conf["lock"]; l != "" {
		return nil, die("%s is locked (%s)", g.kind(), l)
	}
	sn := g.snaps[c.vars["snapname"]]
	if sn == nil {
		return nil, die("snapshot '%s' does not exist", c.vars["snapname"])
	}
	if len(c.str("description")) > descriptionMax {
		return nil, paramErr(map[string]string{"description": "value may only be 8192 characters long"})
	}
	sn.description = c.str("description")
	return nil, nil
}

// postRollback is POST .../snapshot/{snapname}/rollback (VM.Snapshot or
// VM.Snapshot.Rollback): a vzrollback/qmrollback UPID; startRollback does
// the work.
func postRollback(c *call) (any, error) {
	if err := c.s.checkAny(c.who, vmPath(c), "VM.Snapshot", "VM.Snapshot.Rollback"); err != nil {
		return nil, err
	}
	g, err := c.guest()
	if err != nil {
		return nil, err
	}
	return c.s.startRollback(g, c.who, c.vars["snapname"], c.flag("start")).upid, nil
}

// startRollback runs GC AbstractConfig.pm snapshot_rollback. At once, in
// its order: templates refused; "snapshot 'x' does not exist"; each
// volume's volume_rollback_is_possible (ZFS: the most recent only);
// "unable to rollback to incomplete snapshot (snapstate = prepare)"; the
// lock; a running guest hard-stopped; lock=rollback. When due: the disk
// goes back, the snapshot's config is copied in (keeping description and
// unused*), parent set, lock removed; a QEMU snapshot with vmstate resumes,
// and start=1 starts the guest. A failed volume rollback leaves
// lock=rollback (only root can clear it).
func (s *Sim) startRollback(g *guest, who *principal, name string, start bool) *task {
	typ := "qmrollback"
	if g.typ == LXC {
		typ = "vzrollback"
	}
	n := s.nodes[g.node]
	t := s.newTask(n, typ, itoa(g.vmid), who, func(t *task, failMsg string) error {
		sn := g.snaps[name]
		if failMsg != "" {
			// A failed volume rollback: the worker dies before its second
			// pass, so lock=rollback stays.
			return errorf("%s", failMsg)
		}
		switch {
		case g.isTemplate():
			return errorf("you can't rollback if vm is a template")
		case sn == nil:
			return errorf("snapshot '%s' does not exist", name)
		case g.conf["lock"] != LockRollback:
			return errorf("got wrong lock")
		}
		keep := map[string]string{}
		for k, v := range g.conf {
			if k == "description" || len(k) > 6 && k[:6] == "unused" {
				keep[k] = v
			}
		}
		conf := snapshotConf(sn.conf)
		for k, v := range keep {
			conf[k] = v
		}
		conf["parent"] = name
		g.conf = conf
		g.written = sn.written
		if !sn.vmstate {
			sn.unique = 0
		}
		if (g.typ == QEMU && sn.vmstate) || start {
			g.running, g.paused, g.startedAt = true, false, s.clock.now()
		}
		return nil
	})
	vol, _ := g.rootVolume()
	st := s.storages[g.node+"/"+vol.storage]
	sn := g.snaps[name]
	switch {
	case g.isTemplate():
		s.failTask(t, "you can't rollback if vm is a template")
		return t
	case sn == nil:
		s.failTask(t, "snapshot '"+name+"' does not exist")
		return t
	}
	if msg := rollbackBlocked(st, vol, g, sn); msg != "" {
		s.failTask(t, msg)
		return t
	}
	switch {
	case sn.snapstate != "":
		s.failTask(t, "unable to rollback to incomplete snapshot (snapstate = "+sn.snapstate+")")
		return t
	case g.conf["lock"] != "":
		s.failTask(t, g.kind()+" is locked ("+g.conf["lock"]+")")
		return t
	}
	if g.running {
		// LXC vm_stop(1), QEMU vm_stop with a 5 s timeout: a hard stop.
		g.running, g.paused = false, false
		t.log = append(t.log, "stopping guest (hard stop before rollback)")
	}
	g.conf["lock"] = LockRollback
	return t
}

// rollbackBlocked is PS *Plugin.pm volume_rollback_is_possible: ZFS rolls
// back only to the most recent snapshot of the volume.
func rollbackBlocked(st *storage, vol volume, g *guest, sn *snapshot) string {
	if st == nil {
		return "storage '" + vol.storage + "' does not exist"
	}
	if st.typ == StorageZFSPool {
		if newest := g.newestSnapshot(); newest != nil && newest != sn {
			return "can't rollback, '" + sn.name + "' is not most recent snapshot on '" + vol.storage + ":" + vol.volname + "'"
		}
	}
	return ""
}

// deleteSnapshot is DELETE .../snapshot/{snapname} (VM.Snapshot; force in
// the query): a vzdelsnapshot/qmdelsnapshot UPID; startDeleteSnapshot does
// the work.
func deleteSnapshot(c *call) (any, error) {
	if err := c.s.check(c.who, vmPath(c), "VM.Snapshot"); err != nil {
		return nil, err
	}
	g, err := c.guest()
	if err != nil {
		return nil, err
	}
	return c.s.startDeleteSnapshot(g, c.who, c.vars["snapname"], c.flag("force")).upid, nil
}

// startDeleteSnapshot runs GC AbstractConfig.pm snapshot_delete: at once
// "snapshot 'x' does not exist", then set_lock (refused on any lock), so
// lock=snapshot-delete, then templates refused (the lock stays), then
// snapstate=delete; when due the volume snapshot
// goes, children and current are re-parented to the deleted one's parent,
// and the section and lock are removed. A non-forced delete that fails
// part way leaves lock snapshot-delete and snapstate=delete; a forced one
// removes the section anyway, with a warning.
func (s *Sim) startDeleteSnapshot(g *guest, who *principal, name string, force bool) *task {
	typ := "qmdelsnapshot"
	if g.typ == LXC {
		typ = "vzdelsnapshot"
	}
	n := s.nodes[g.node]
	t := s.newTask(n, typ, itoa(g.vmid), who, func(t *task, failMsg string) error {
		sn := g.snaps[name]
		if failMsg != "" && !force {
			return errorf("%s", failMsg)
		}
		if g.conf["lock"] != LockSnapshotDelete {
			return errorf("encountered invalid lock, expected '%s'", LockSnapshotDelete)
		}
		if sn == nil {
			return errorf("snapshot '%s' does not exist", name)
		}
		for _, other := range g.snaps {
			if other.parent == name {
				other.parent = sn.parent
			}
		}
		if g.conf["parent"] == name {
			if sn.parent != "" {
				g.conf["parent"] = sn.parent
			} else {
				delete(g.conf, "parent")
			}
		}
		delete(g.snaps, name)
		delete(g.conf, "lock")
		if failMsg != "" {
			t.log = append(t.log, "WARN: "+failMsg)
			return warnings(1)
		}
		return nil
	})
	sn := g.snaps[name]
	switch {
	case sn == nil:
		s.failTask(t, "snapshot '"+name+"' does not exist")
		return t
	case g.conf["lock"] != "":
		s.failTask(t, g.kind()+" is locked ("+g.conf["lock"]+")")
		return t
	}
	g.conf["lock"] = LockSnapshotDelete
	if g.isTemplate() {
		s.failTask(t, "you can't delete a snapshot if vm is a template")
		return t
	}
	sn.snapstate = "delete"
	return t
}

// warnings is a task that ended OK with warnings ("WARNINGS: n").
type warnings int

func (w warnings) Error() string { return "WARNINGS: " + strconv.Itoa(int(w)) }

// fullStorageSnapshotError is what a volume snapshot answers on a storage
// with no room left (LVM's lvcreate refusal on a thin pool past its
// threshold; ZFS's out of space), or "" when there is room.
func (s *Sim) fullStorageSnapshotError(g *guest, name string) string {
	vol, ok := g.rootVolume()
	if !ok {
		return ""
	}
	st := s.storages[g.node+"/"+vol.storage]
	if st == nil || s.storageUsed(st) < st.total {
		return ""
	}
	switch st.typ {
	case StorageLVMThin:
		return "lvcreate snapshot '" + st.vgname + "/snap_" + vol.volname + "_" + name + "' error:   Cannot create new thin volume, free space in thin pool " + st.vgname + "/" + st.thin + " reached threshold."
	case StorageZFSPool:
		return "zfs error: cannot create snapshot '" + st.pool + "/" + vol.volname + "@" + name + "': out of space"
	}
	return "snapshot of '" + vol.storage + ":" + vol.volname + "' failed: no space left on device"
}
