package pvesim

import (
	"net/http"
	"strings"
	"testing"
)

// TestFailNextSnapshotCleansUp: a take whose volume snapshot fails is cleaned
// up as Proxmox does (no section, no lock) and its task carries the words
// (incomplete, never ready).
func TestFailNextSnapshotCleansUp(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	e.sim.FailNextTask("vzsnapshot", 101, "lvcreate snapshot 'pve/snap_vm-101-disk-0_s1' error: out of space")
	upid := e.upid(t, "POST", "/nodes/pve-1/lxc/101/snapshot", form("snapname", "s1"))
	equal(t, "prepared first", e.guest(t, 101).Snapshots[0].SnapState, "prepare")
	equal(t, "exit status", e.finish(t, upid), "lvcreate snapshot 'pve/snap_vm-101-disk-0_s1' error: out of space")
	g := e.guest(t, 101)
	equal(t, "section removed", len(g.Snapshots), 0)
	equal(t, "lock removed", g.Lock, "")
	// The fault was for one task only.
	equal(t, "next take", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/lxc/101/snapshot", form("snapname", "s1"))), "OK")
}

// TestDieHalfWayLeavesPrepareAndLock: a take killed half-way leaves
// snapstate=prepare and lock=snapshot; the guest refuses take, delete and
// config changes with the lock's words until root unlocks it; then the delete
// finishes Proxmox's cleanup.
func TestDieHalfWayLeavesPrepareAndLock(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	e.sim.DieNextTask("qmsnapshot", 0)
	upid := e.upid(t, "POST", "/nodes/pve-1/qemu/102/snapshot", form("snapname", "s1"))
	equal(t, "exit status", e.finish(t, upid), "unexpected status")
	g := e.guest(t, 102)
	equal(t, "lock stays", g.Lock, LockSnapshot)
	equal(t, "snapstate stays", g.Snapshots[0].SnapState, "prepare")

	equal(t, "take refused", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/qemu/102/snapshot", form("snapname", "s2"))), "VM is locked (snapshot)")
	equal(t, "delete refused", e.finish(t, e.upid(t, "DELETE", "/nodes/pve-1/qemu/102/snapshot/s1", nil)), "VM is locked (snapshot)")
	a := e.call(t, adminToken, "PUT", "/nodes/pve-1/qemu/102/snapshot/s1/config", form("description", "x"))
	equal(t, "snapshot config refused", a.reason, "VM is locked (snapshot)")
	// Only root may touch the lock.
	a = e.call(t, adminToken, "PUT", "/nodes/pve-1/qemu/102/config", form("delete", "lock"))
	equal(t, "token cannot unlock", a.reason, "only root can set 'lock' config")

	must(t, e.sim.Unlock(102))
	equal(t, "rollback to an incomplete snapshot", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/qemu/102/snapshot/s1/rollback", nil)),
		"unable to rollback to incomplete snapshot (snapstate = prepare)")
	equal(t, "delete after unlock", e.finish(t, e.upid(t, "DELETE", "/nodes/pve-1/qemu/102/snapshot/s1", nil)), "OK")
	equal(t, "gone", len(e.guest(t, 102).Snapshots), 0)
}

// TestFailedDeleteLeavesSnapshotDelete: a non-forced delete that fails part
// way leaves lock snapshot-delete and snapstate=delete; a forced one ends
// with a warning and removes the section.
func TestFailedDeleteLeavesSnapshotDelete(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	equal(t, "take", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/lxc/101/snapshot", form("snapname", "s1"))), "OK")
	e.sim.FailNextTask("vzdelsnapshot", 101, "lvremove 'pve/snap_vm-101-disk-0_s1' error: device busy")
	equal(t, "failed delete", e.finish(t, e.upid(t, "DELETE", "/nodes/pve-1/lxc/101/snapshot/s1", nil)), "lvremove 'pve/snap_vm-101-disk-0_s1' error: device busy")
	g := e.guest(t, 101)
	equal(t, "lock", g.Lock, LockSnapshotDelete)
	equal(t, "snapstate", g.Snapshots[0].SnapState, "delete")
	equal(t, "retry refused", e.finish(t, e.upid(t, "DELETE", "/nodes/pve-1/lxc/101/snapshot/s1", nil)), "CT is locked (snapshot-delete)")
	must(t, e.sim.Unlock(101))
	e.sim.FailNextTask("vzdelsnapshot", 101, "lvremove error")
	equal(t, "forced delete", e.finish(t, e.upid(t, "DELETE", "/nodes/pve-1/lxc/101/snapshot/s1", form("force", "1"))), "WARNINGS: 1")
	equal(t, "removed", len(e.guest(t, 101).Snapshots), 0)
}

// TestLockedRollbackWords: a guest left with lock: rollback refuses take,
// restore, config and clone with "CT is locked (rollback)".
func TestLockedRollbackWords(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	equal(t, "take", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/lxc/101/snapshot", form("snapname", "s1"))), "OK")
	e.sim.FailNextTask("vzrollback", 101, "lvconvert error")
	equal(t, "failed rollback", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/lxc/101/snapshot/s1/rollback", nil)), "lvconvert error")
	g := e.guest(t, 101)
	equal(t, "left locked", g.Lock, LockRollback)
	equal(t, "left stopped", g.Running, false)
	equal(t, "take", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/lxc/101/snapshot", form("snapname", "s2"))), "CT is locked (rollback)")
	equal(t, "restore", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/lxc/101/snapshot/s1/rollback", nil)), "CT is locked (rollback)")
	equal(t, "start", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/lxc/101/status/start", nil)), "CT is locked (rollback)")
	for _, r := range []struct {
		method, path string
		params       []string
	}{
		{"PUT", "/nodes/pve-1/lxc/101/config", []string{"description", "x"}},
		{"POST", "/nodes/pve-1/lxc/101/clone", []string{"newid", "150"}},
		{"POST", "/nodes/pve-1/lxc/101/template", nil},
	} {
		a := e.call(t, adminToken, r.method, r.path, form(r.params...))
		equal(t, r.path+" status", a.status, http.StatusInternalServerError)
		equal(t, r.path+" words", a.reason, "CT is locked (rollback)")
	}
	must(t, e.sim.SetLock(102, LockBackup))
	a := e.call(t, adminToken, "PUT", "/nodes/pve-1/qemu/102/config", form("onboot", "1"))
	equal(t, "QEMU words", a.reason, "VM is locked (backup)")
}

// TestCutNode: a node cut off answers 595 for its own paths, shows offline,
// and its guests unknown; after reconnecting all is as before.
func TestCutNode(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	must(t, e.sim.CutNode("pve-2"))
	a := e.call(t, adminToken, "GET", "/nodes/pve-2/lxc/201/snapshot", nil)
	equal(t, "status", a.status, statusUnreachable)
	equal(t, "reason", a.reason, "No route to host")
	equal(t, "no body", a.raw, "")
	equal(t, "pve-1 still answers", e.call(t, adminToken, "GET", "/nodes/pve-1/lxc", nil).status, http.StatusOK)
	for _, n := range e.call(t, adminToken, "GET", "/nodes", nil).dataList(t) {
		want := map[string]string{"pve-1": "online", "pve-2": "offline"}[n["node"].(string)]
		equal(t, "node "+n["node"].(string), n["status"], any(want))
	}
	for _, r := range e.call(t, adminToken, "GET", "/cluster/resources", form("type", "vm")).dataList(t) {
		if r["node"] == "pve-2" {
			equal(t, "guest on the cut node", r["status"], any("unknown"))
		}
	}
	must(t, e.sim.ReconnectNode("pve-2"))
	equal(t, "back", e.call(t, adminToken, "GET", "/nodes/pve-2/lxc/201/snapshot", nil).status, http.StatusOK)
}

// TestRebootNode: after a reboot, onboot guests run, others stay stopped, a
// template never starts, a locked guest stays stopped; running tasks die.
func TestRebootNode(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	must(t, e.sim.AddGuest(GuestSpec{VMID: 110, Type: QEMU, Node: "pve-1", Name: "held", Storage: "local-lvm", OnBoot: true}))
	equal(t, "template", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/qemu/110/template", nil)), "OK")
	must(t, e.sim.AddGuest(GuestSpec{VMID: 111, Type: LXC, Node: "pve-1", Name: "locked", Storage: "local-lvm", OnBoot: true, Running: true}))
	must(t, e.sim.SetLock(111, LockBackup))
	must(t, e.sim.AddGuest(GuestSpec{VMID: 112, Type: LXC, Node: "pve-1", Name: "plain", Storage: "local-lvm", Running: true}))
	upid := e.upid(t, "POST", "/nodes/pve-1/lxc/112/snapshot", form("snapname", "s1"))

	must(t, e.sim.RebootNode("pve-1"))
	equal(t, "the killed take's lock stays", e.guest(t, 112).Lock, LockSnapshot)
	equal(t, "running task died", e.taskStatus(t, upid)["exitstatus"], any("unexpected status"))
	for vmid, want := range map[int]bool{101: true, 110: false, 111: false, 112: false, 102: false} {
		equal(t, "running after reboot: "+itoa(vmid), e.guest(t, vmid).Running, want)
	}
	equal(t, "pve-2 untouched", e.guest(t, 201).Running, true)
	tasks, err := e.sim.Tasks("pve-1")
	must(t, err)
	var starts []string
	for _, tk := range tasks {
		if tk.Type == "vzstart" || tk.Type == "qmstart" {
			starts = append(starts, tk.ID+"="+tk.ExitStatus)
		}
	}
	equal(t, "start tasks", strings.Join(starts, ","), "111=CT is locked (backup),101=OK")
}

// TestStorageGrowsWithWrites: writes fill thin storage, snapshots then hold
// space, and FillStorage sets a percentage.
func TestStorageGrowsWithWrites(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	used := func() float64 {
		return e.call(t, adminToken, "GET", "/nodes/pve-1/storage/local-lvm/status", nil).dataMap(t)["used"].(float64)
	}
	before := used()
	must(t, e.sim.Write(101, 256*mib))
	equal(t, "write grows use", used()-before, float64(256*mib))
	equal(t, "take", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/lxc/101/snapshot", form("snapname", "s1"))), "OK")
	mid := used()
	must(t, e.sim.Write(101, 100*mib))
	equal(t, "a write after a snapshot counts twice (the snapshot holds the old blocks)", used()-mid, float64(200*mib))

	must(t, e.sim.FillStorage("pve-1", "local-lvm", 90))
	st := e.call(t, adminToken, "GET", "/nodes/pve-1/storage/local-lvm/status", nil).dataMap(t)
	equal(t, "90% full", st["used"].(float64)/st["total"].(float64), 0.9)
	equal(t, "type", st["type"], any("lvmthin"))
	thin := e.call(t, adminToken, "GET", "/nodes/pve-1/disks/lvmthin", nil).dataList(t)
	equal(t, "thin pools", len(thin), 1)
	if thin[0]["metadata_used"].(float64) <= 0 || thin[0]["metadata_size"].(float64) != float64(thinMetadataSize) {
		t.Fatalf("thin metadata %v", thin[0])
	}
	a := e.call(t, adminToken, "GET", "/nodes/pve-1/storage/nope/status", nil)
	errs, _ := a.body["errors"].(map[string]any)
	equal(t, "unknown storage", errs["storage"], any("No such storage.\n"))
}

// TestDropNode: a dropped node's calls get no answer at all; the others
// still do.
func TestDropNode(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	must(t, e.sim.DropNode("pve-2"))
	req, _ := http.NewRequest("GET", e.base+apiPrefix+"/nodes/pve-2/lxc", nil)
	req.Header.Set("Authorization", "PVEAPIToken="+adminToken+"="+testSecret)
	resp, err := e.hc.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("a dropped node answered %s", resp.Status)
	}
	equal(t, "pve-1 answers", e.call(t, adminToken, "GET", "/nodes/pve-1/lxc", nil).status, http.StatusOK)
	must(t, e.sim.ReconnectNode("pve-2"))
	equal(t, "back", e.call(t, adminToken, "GET", "/nodes/pve-2/lxc", nil).status, http.StatusOK)
}

// TestOutsideSnapshotAndDelete: an admin's snapshot and delete on the host
// show in the task list by root@pam and change the guest as boxsnap's own
// would, so the outside-restore scan reads them as outside changes.
func TestOutsideSnapshotAndDelete(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	upid, err := e.sim.OutsideSnapshot(102, "by-admin", "made on the host")
	must(t, err)
	equal(t, "outside take", e.finish(t, upid), "OK")
	g := e.guest(t, 102)
	equal(t, "parent", g.Parent, "by-admin")
	equal(t, "description", g.Snapshots[0].Description, "made on the host")
	if _, err := e.sim.OutsideSnapshot(102, "current", ""); err == nil {
		t.Fatal("an outside snapshot named current was taken")
	}
	upid, err = e.sim.OutsideDelete(102, "by-admin", false)
	must(t, err)
	equal(t, "outside delete", e.finish(t, upid), "OK")
	items := e.call(t, adminToken, "GET", "/nodes/pve-1/tasks", form("userfilter", "root@pam")).dataList(t)
	equal(t, "root's tasks", len(items), 2)
	equal(t, "newest first", items[0]["type"], any("qmdelsnapshot"))
}

// TestFullStorageRefusesTake: on a full storage the volume snapshot fails
// with the storage's words and is cleaned up.
func TestFullStorageRefusesTake(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	must(t, e.sim.FillStorage("pve-1", "local-lvm", 100))
	equal(t, "LVM-thin full", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/lxc/101/snapshot", form("snapname", "s1"))),
		"lvcreate snapshot 'pve/snap_vm-101-disk-0_s1' error:   Cannot create new thin volume, free space in thin pool pve/data reached threshold.")
	g := e.guest(t, 101)
	equal(t, "cleaned up", len(g.Snapshots), 0)
	equal(t, "unlocked", g.Lock, "")
	must(t, e.sim.FillStorage("pve-2", "local-zfs", 100))
	equal(t, "ZFS full", e.finish(t, e.upid(t, "POST", "/nodes/pve-2/lxc/201/snapshot", form("snapname", "s1"))),
		"zfs error: cannot create snapshot 'rpool/data/subvol-201-disk-0@s1': out of space")
	must(t, e.sim.FillStorage("pve-1", "local-lvm", 50))
	equal(t, "room again", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/lxc/101/snapshot", form("snapname", "s1"))), "OK")
}
