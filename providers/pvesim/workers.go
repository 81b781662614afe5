package pvesim

import (
	"strconv"
	"strings"
	"time"
)

// workers start the Proxmox worker tasks that the API and the control API
// both run: a snapshot, a rollback, a snapshot's delete, a template, a
// power action; each does at once what Proxmox's worker does before it
// forks, and leaves the rest to its task's finish.
type workers struct {
	*cluster
}

// startSnapshot runs GC AbstractConfig.pm snapshot_create: at once (the
// worker's snapshot_prepare) the checks, lock=snapshot and a section with
// snapstate=prepare; when due (snapshot_commit) snapstate and the lock go
// and the current parent becomes the new snapshot. A failed volume snapshot
// is cleaned up with a forced delete.
func (s *workers) startSnapshot(g *guest, who *principal, name, description string, vmstate bool) *task {
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

// startRollback runs GC AbstractConfig.pm snapshot_rollback. At once, in
// its order: templates refused; "snapshot 'x' does not exist"; each
// volume's volume_rollback_is_possible (ZFS: the most recent only);
// "unable to rollback to incomplete snapshot (snapstate = prepare)"; the
// lock; a running guest hard-stopped; lock=rollback. When due: the disk
// goes back, the snapshot's config is copied in (keeping description and
// unused*), parent set, lock removed; a QEMU snapshot with vmstate resumes,
// and start=1 starts the guest. A failed volume rollback leaves
// lock=rollback (only root can clear it).
func (s *workers) startRollback(g *guest, who *principal, name string, start bool) *task {
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

// startDeleteSnapshot runs GC AbstractConfig.pm snapshot_delete: at once
// "snapshot 'x' does not exist", then set_lock (refused on any lock), so
// lock=snapshot-delete, then templates refused (the lock stays), then
// snapstate=delete; when due the volume snapshot
// goes, children and current are re-parented to the deleted one's parent,
// and the section and lock are removed. A non-forced delete that fails
// part way leaves lock snapshot-delete and snapstate=delete; a forced one
// removes the section anyway, with a warning.
func (s *workers) startDeleteSnapshot(g *guest, who *principal, name string, force bool) *task {
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

// fullStorageSnapshotError is what a volume snapshot answers on a storage
// with no room left (LVM's lvcreate refusal on a thin pool past its
// threshold; ZFS's out of space), or "" when there is room.
func (s *workers) fullStorageSnapshotError(g *guest, name string) string {
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

func (s *workers) startTemplate(g *guest, who *principal) *task {
	tt := "qmtemplate"
	if g.typ == LXC {
		tt = "vztemplate"
	}
	return s.newTask(s.nodes[g.node], tt, itoa(g.vmid), who, func(t *task, failMsg string) error {
		if failMsg != "" {
			return errorf("%s", failMsg)
		}
		vol, ok := g.rootVolume()
		if ok && !strings.Contains(vol.volname, "/") {
			st := s.storages[g.node+"/"+vol.storage]
			typ := ""
			if st != nil {
				typ = st.typ
			}
			g.conf[g.diskKey()] = vol.storage + ":" + volumeName(typ, g.typ, g.vmid, volumeFormat(vol.volname), true) + ",size=" + formatSize(vol.size)
		}
		g.conf["template"] = "1"
		return nil
	})
}

func (s *workers) applyPower(g *guest, action string) {
	switch action {
	case "start":
		if !g.running {
			g.running, g.paused, g.startedAt = true, false, s.clock.now()
		}
	case "stop", "shutdown":
		g.running, g.paused = false, false
	case "suspend":
		g.paused = true
	case "resume":
		g.paused = false
	}
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

// warnings is a task that ended OK with warnings ("WARNINGS: n").
type warnings int

func (w warnings) Error() string { return "WARNINGS: " + strconv.Itoa(int(w)) }
