package pvesim

import (
	"net/http"
	"testing"
)

// TestSnapshotPrepareThenCommit: a take holds lock=snapshot and
// snapstate=prepare while its task runs, and is complete only when the task
// ends (GC snapshot_create), so a take is ready only once confirmed.
func TestSnapshotPrepareThenCommit(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	upid := e.upid(t, "POST", "/nodes/pve-1/lxc/101/snapshot", form("snapname", "s1", "description", "first"))
	equal(t, "task type in UPID", upid[len(upid)-len("vzsnapshot:101:boxsnap@pve!admin:"):], "vzsnapshot:101:boxsnap@pve!admin:")
	g := e.guest(t, 101)
	equal(t, "lock while taking", g.Lock, LockSnapshot)
	equal(t, "snapstate while taking", g.Snapshots[0].SnapState, "prepare")
	equal(t, "task running", e.taskStatus(t, upid)["status"], any("running"))

	a := e.call(t, adminToken, "PUT", "/nodes/pve-1/lxc/101/config", form("description", "x"))
	equal(t, "config PUT while locked", a.status, http.StatusInternalServerError)
	equal(t, "locked words", a.reason, "CT is locked (snapshot)")
	equal(t, "body message keeps the newline", a.body["message"], any("CT is locked (snapshot)\n"))

	equal(t, "exit status", e.finish(t, upid), "OK")
	g = e.guest(t, 101)
	equal(t, "lock after", g.Lock, "")
	equal(t, "snapstate after", g.Snapshots[0].SnapState, "")
	equal(t, "current's parent", g.Parent, "s1")

	list := e.call(t, adminToken, "GET", "/nodes/pve-1/lxc/101/snapshot", nil).dataList(t)
	equal(t, "listed", len(list), 2)
	last := list[len(list)-1]
	equal(t, "ends with current", last["name"], any("current"))
	equal(t, "current description", last["description"], any("You are here!"))
	equal(t, "current running", last["running"], any(float64(1)))
	equal(t, "current parent", last["parent"], any("s1"))

	// A second snapshot's parent is the first.
	equal(t, "second", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/lxc/101/snapshot", form("snapname", "s2"))), "OK")
	cfg := e.call(t, adminToken, "GET", "/nodes/pve-1/lxc/101/snapshot/s2/config", nil).dataMap(t)
	equal(t, "s2 parent", cfg["parent"], any("s1"))
	equal(t, "s2 hostname copied", cfg["hostname"], any("amber-fox"))

	// Same name again: the task fails with Proxmox's words.
	equal(t, "same name", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/lxc/101/snapshot", form("snapname", "s2"))), "snapshot name 's2' already used")
}

// TestSnapshotNames: names are checked as Proxmox's schema and API do.
func TestSnapshotNames(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	for _, tc := range []struct {
		name, reason, param string
		status              int
	}{
		{"1abc", "Parameter verification failed.", "invalid format - invalid configuration ID '1abc'\n", 400},
		{"a", "Parameter verification failed.", "invalid format - invalid configuration ID 'a'\n", 400},
		{"a.b", "Parameter verification failed.", "invalid format - invalid configuration ID 'a.b'\n", 400},
		{"abcdefghijabcdefghijabcdefghijabcdefghijk", "Parameter verification failed.", "value may only be 40 characters long\n", 400},
		{"current", "unable to use snapshot name 'current' (reserved name)", "", 500},
		{"vzdump", "unable to use snapshot name 'vzdump' (reserved name)", "", 500},
	} {
		a := e.call(t, adminToken, "POST", "/nodes/pve-1/lxc/101/snapshot", form("snapname", tc.name))
		equal(t, tc.name+" status", a.status, tc.status)
		equal(t, tc.name+" reason", a.reason, tc.reason)
		if tc.param != "" {
			errs, _ := a.body["errors"].(map[string]any)
			equal(t, tc.name+" errors.snapname", errs["snapname"], any(tc.param))
		}
	}
	// "vzdump" is reserved for LXC only; "pending" for QEMU only.
	a := e.call(t, adminToken, "POST", "/nodes/pve-1/qemu/102/snapshot", form("snapname", "pending"))
	equal(t, "QEMU pending", a.reason, "unable to use snapshot name 'pending' (reserved name)")
	equal(t, "QEMU vzdump", e.call(t, adminToken, "POST", "/nodes/pve-1/qemu/102/snapshot", form("snapname", "vzdump")).status, http.StatusOK)
	// Booleans are 1/0: "true" fails the type check.
	a = e.call(t, adminToken, "POST", "/nodes/pve-1/qemu/102/snapshot", form("snapname", "ok1", "vmstate", "true"))
	errs, _ := a.body["errors"].(map[string]any)
	equal(t, "vmstate=true", errs["vmstate"], any("type check ('boolean') failed - got 'true'\n"))
}

// TestZFSRollsBackNewestOnly: on ZFS only the most recent snapshot can be
// restored, with Proxmox's words; LVM-thin restores any (PS
// volume_rollback_is_possible).
func TestZFSRollsBackNewestOnly(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	for _, n := range []string{"one", "two", "three"} {
		equal(t, "take "+n+" on ZFS", e.finish(t, e.upid(t, "POST", "/nodes/pve-2/lxc/201/snapshot", form("snapname", n))), "OK")
		equal(t, "take "+n+" on LVM-thin", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/lxc/101/snapshot", form("snapname", n))), "OK")
	}
	upid := e.upid(t, "POST", "/nodes/pve-2/lxc/201/snapshot/one/rollback", nil)
	equal(t, "older on ZFS", e.finish(t, upid), "can't rollback, 'one' is not most recent snapshot on 'local-zfs:subvol-201-disk-0'")
	g := e.guest(t, 201)
	equal(t, "nothing changed: running", g.Running, true)
	equal(t, "nothing changed: lock", g.Lock, "")
	equal(t, "nothing newer deleted", len(g.Snapshots), 3)

	equal(t, "newest on ZFS", e.finish(t, e.upid(t, "POST", "/nodes/pve-2/lxc/201/snapshot/three/rollback", nil)), "OK")
	equal(t, "oldest on LVM-thin", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/lxc/101/snapshot/one/rollback", nil)), "OK")
	g = e.guest(t, 101)
	equal(t, "parent after rollback", g.Parent, "one")
	equal(t, "stopped by the rollback (no start=1)", g.Running, false)
	equal(t, "every snapshot still there", len(g.Snapshots), 3)
}

// TestRollbackStopsAndLocks: a rollback hard-stops a running guest and holds
// lock=rollback until it ends; with start=1 the guest runs again.
func TestRollbackStopsAndLocks(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	equal(t, "take", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/lxc/101/snapshot", form("snapname", "s1"))), "OK")
	must(t, e.sim.Write(101, 512*mib))
	upid := e.upid(t, "POST", "/nodes/pve-1/lxc/101/snapshot/s1/rollback", form("start", "1"))
	g := e.guest(t, 101)
	equal(t, "lock during rollback", g.Lock, LockRollback)
	equal(t, "stopped during rollback", g.Running, false)
	equal(t, "rollback", e.finish(t, upid), "OK")
	g = e.guest(t, 101)
	equal(t, "running after start=1", g.Running, true)
	equal(t, "written back to the snapshot's", g.Written, gib)
}

// TestSnapshotFeatureNotAvailable: raw volumes on a directory store take no
// snapshots (PS DirPlugin volume_has_feature).
func TestSnapshotFeatureNotAvailable(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	upid := e.upid(t, "POST", "/nodes/pve-1/lxc/103/snapshot", form("snapname", "s1"))
	equal(t, "dir raw", e.finish(t, upid), "snapshot feature is not available")
	g := e.guest(t, 103)
	equal(t, "no section", len(g.Snapshots), 0)
	equal(t, "no lock", g.Lock, "")
}

// TestDeleteReparents: deleting a middle snapshot re-parents its child and
// current to its parent.
func TestDeleteReparents(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	for _, n := range []string{"a1", "b2", "c3"} {
		equal(t, "take "+n, e.finish(t, e.upid(t, "POST", "/nodes/pve-1/qemu/102/snapshot", form("snapname", n))), "OK")
	}
	upid := e.upid(t, "DELETE", "/nodes/pve-1/qemu/102/snapshot/b2", nil)
	g := e.guest(t, 102)
	equal(t, "lock while deleting", g.Lock, LockSnapshotDelete)
	equal(t, "delete", e.finish(t, upid), "OK")
	g = e.guest(t, 102)
	equal(t, "left", len(g.Snapshots), 2)
	equal(t, "c3's parent", g.Snapshots[1].Parent, "a1")
	equal(t, "delete c3", e.finish(t, e.upid(t, "DELETE", "/nodes/pve-1/qemu/102/snapshot/c3", nil)), "OK")
	equal(t, "current re-parented", e.guest(t, 102).Parent, "a1")
	equal(t, "missing", e.finish(t, e.upid(t, "DELETE", "/nodes/pve-1/qemu/102/snapshot/zz", nil)), "snapshot 'zz' does not exist")
	a := e.call(t, adminToken, "GET", "/nodes/pve-1/qemu/102/snapshot/zz/config", nil)
	equal(t, "config of a missing snapshot", a.reason, "snapshot 'zz' does not exist")
}

// TestQEMUVMState: a memory snapshot of a running VM keeps vmstate and
// resumes on rollback; on a stopped VM vmstate is ignored.
func TestQEMUVMState(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	equal(t, "stopped", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/qemu/102/snapshot", form("snapname", "cold", "vmstate", "1"))), "OK")
	equal(t, "start", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/qemu/102/status/start", nil)), "OK")
	equal(t, "hot", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/qemu/102/snapshot", form("snapname", "hot", "vmstate", "1"))), "OK")
	g := e.guest(t, 102)
	equal(t, "cold has no vmstate", g.Snapshots[0].VMState, false)
	equal(t, "hot has vmstate", g.Snapshots[1].VMState, true)
	equal(t, "rollback hot", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/qemu/102/snapshot/hot/rollback", nil)), "OK")
	equal(t, "resumed", e.guest(t, 102).Running, true)
	equal(t, "rollback cold", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/qemu/102/snapshot/cold/rollback", nil)), "OK")
	equal(t, "stopped after a disk-only rollback", e.guest(t, 102).Running, false)
}

// TestRollbackByStorageType: Proxmox's rollback rule per storage type: qcow2
// on a directory, RBD and BTRFS roll back to any snapshot; LVM (thick) and
// raw files take none.
func TestRollbackByStorageType(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	for i, st := range []StorageSpec{
		{ID: "ceph", Type: StorageRBD, Total: 100 * gib, Shared: true},
		{ID: "btr", Type: StorageBTRFS, Total: 100 * gib},
		{ID: "thick", Type: StorageLVM, Total: 100 * gib},
	} {
		must(t, e.sim.AddStorage("pve-1", st))
		must(t, e.sim.AddGuest(GuestSpec{VMID: 400 + i, Type: QEMU, Node: "pve-1", Storage: st.ID}))
	}
	must(t, e.sim.AddGuest(GuestSpec{VMID: 403, Type: QEMU, Node: "pve-1", Storage: "local"}))
	must(t, e.sim.AddGuest(GuestSpec{VMID: 404, Type: QEMU, Node: "pve-1", Storage: "local", Format: "raw"}))
	equal(t, "qcow2 volume name", e.guest(t, 403).Config["scsi0"], "local:403/vm-403-disk-0.qcow2,size=8G")
	for _, vmid := range []string{"400", "401", "403"} {
		for _, n := range []string{"a1", "b2"} {
			equal(t, vmid+" take "+n, e.finish(t, e.upid(t, "POST", "/nodes/pve-1/qemu/"+vmid+"/snapshot", form("snapname", n))), "OK")
		}
		equal(t, vmid+" rollback to the older", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/qemu/"+vmid+"/snapshot/a1/rollback", nil)), "OK")
	}
	for _, vmid := range []string{"402", "404"} {
		equal(t, vmid+" take", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/qemu/"+vmid+"/snapshot", form("snapname", "a1"))), "snapshot feature is not available")
	}
}
