package pvesim

import (
	"net/http"
	"strings"
	"testing"
)

// TestHeldCopySteps: a held copy (clone, disarm, template), on the simulator:
// a full clone (task ID = the SOURCE vmid, new MACs, new SMBIOS UUID, no
// snapshots, onboot copied), disarmed in one config write, made a template; a
// template never starts, and its linked clone is re-armed.
func TestHeldCopySteps(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	must(t, e.sim.AddGuest(GuestSpec{VMID: 150, Type: QEMU, Node: "pve-1", Name: "box", Storage: "local-lvm", OnBoot: true, Written: 2 * gib}))
	equal(t, "take", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/qemu/150/snapshot", form("snapname", "s1"))), "OK")
	src := e.guest(t, 150)

	a := e.call(t, adminToken, "POST", "/nodes/pve-1/qemu/150/clone", form("newid", "9001", "pool", "nope"))
	equal(t, "unknown pool", a.reason, "Permission check failed (pool 'nope' does not exist)")
	must(t, e.sim.AddPool("boxsnap"))
	upid := e.upid(t, "POST", "/nodes/pve-1/qemu/150/clone", form("newid", "9001", "name", "held-copy", "full", "1", "pool", "boxsnap"))
	equal(t, "task ID is the source", strings.Contains(upid, ":qmclone:150:"), true)
	equal(t, "target locked while cloning", e.guest(t, 9001).Lock, LockClone)
	equal(t, "clone", e.finish(t, upid), "OK")
	cp := e.guest(t, 9001)
	equal(t, "no lock", cp.Lock, "")
	equal(t, "no snapshots", len(cp.Snapshots), 0)
	equal(t, "no parent", cp.Parent, "")
	equal(t, "onboot copied", cp.OnBoot, true)
	equal(t, "pool", cp.Pool, "boxsnap")
	equal(t, "full copy's disk", cp.Config["scsi0"], "local-lvm:vm-9001-disk-0,size=8G")
	equal(t, "written copied", cp.Written, 2*gib)
	if cp.Config["smbios1"] == src.Config["smbios1"] || mac(cp.Config["net0"]) == mac(src.Config["net0"]) {
		t.Fatalf("clone kept the source's identity: %q %q", cp.Config["smbios1"], cp.Config["net0"])
	}

	a = e.call(t, adminToken, "PUT", "/nodes/pve-1/qemu/9001/config", form("onboot", "0", "net0", cp.Config["net0"]+",link_down=1"))
	equal(t, "disarm", a.status, http.StatusOK)
	upid = e.upid(t, "POST", "/nodes/pve-1/qemu/9001/template", nil)
	equal(t, "template", e.finish(t, upid), "OK")
	cp = e.guest(t, 9001)
	equal(t, "is a template", cp.Template, true)
	equal(t, "base volume", cp.Config["scsi0"], "local-lvm:base-9001-disk-0,size=8G")
	equal(t, "a template cannot start", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/qemu/9001/status/start", nil)), "you can't start a vm if it's a template")
	equal(t, "still stopped", e.guest(t, 9001).Running, false)

	// A linked clone of the template (full defaults to 0) inherits the
	// disarm; storage is not allowed for it.
	a = e.call(t, adminToken, "POST", "/nodes/pve-1/qemu/9001/clone", form("newid", "9002", "storage", "local-lvm"))
	equal(t, "storage on a linked clone", a.reason, "parameter 'storage' not allowed for linked clones")
	equal(t, "linked clone", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/qemu/9001/clone", form("newid", "9002", "name", "adopted"))), "OK")
	ad := e.guest(t, 9002)
	equal(t, "linked disk", ad.Config["scsi0"], "local-lvm:base-9001-disk-0/vm-9002-disk-0,size=8G")
	equal(t, "inherits onboot 0", ad.OnBoot, false)
	equal(t, "inherits link down", strings.HasSuffix(ad.Config["net0"], ",link_down=1"), true)
	equal(t, "not a template", ad.Template, false)

	a = e.call(t, adminToken, "POST", "/nodes/pve-1/qemu/150/clone", form("newid", "9001"))
	equal(t, "QEMU target exists", a.reason, "unable to create VM 9001: config file already exists")
	a = e.call(t, adminToken, "POST", "/nodes/pve-1/qemu/150/template", nil)
	equal(t, "template with snapshots", a.reason, "unable to create template, because VM contains snapshots")
	a = e.call(t, adminToken, "POST", "/nodes/pve-1/qemu/9001/template", nil)
	equal(t, "template of a template", a.reason, "you can't convert a template to a template")
}

// TestLXCCloneAndTemplate: LXC's refusals and its template answering null.
func TestLXCCloneAndTemplate(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	a := e.call(t, adminToken, "POST", "/nodes/pve-1/lxc/101/clone", form("newid", "160"))
	equal(t, "running full clone", a.reason, "Full clone of a running container is only possible from a snapshot")
	a = e.call(t, adminToken, "POST", "/nodes/pve-1/lxc/101/clone", form("newid", "102"))
	equal(t, "target exists", a.reason, "VM 102 already exists on node 'pve-1'")
	equal(t, "take", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/lxc/101/snapshot", form("snapname", "s1"))), "OK")
	upid := e.upid(t, "POST", "/nodes/pve-1/lxc/101/clone", form("newid", "160", "snapname", "s1", "hostname", "copy"))
	equal(t, "source locked disk", e.guest(t, 101).Lock, LockDisk)
	equal(t, "target locked create", e.guest(t, 160).Lock, LockCreate)
	equal(t, "clone from snapshot", e.finish(t, upid), "OK")
	equal(t, "source unlocked", e.guest(t, 101).Lock, "")
	equal(t, "hostname", e.guest(t, 160).Config["hostname"], "copy")

	a = e.call(t, adminToken, "POST", "/nodes/pve-1/lxc/101/template", nil)
	equal(t, "LXC with snapshots", a.reason, "unable to create template, because CT contains snapshots")
	a = e.call(t, adminToken, "POST", "/nodes/pve-1/lxc/160/template", nil)
	equal(t, "LXC template answers null", a.status, http.StatusOK)
	equal(t, "null", a.data(), nil)
	e.sim.Advance(60e9)
	equal(t, "became a template", e.guest(t, 160).Template, true)
	tasks, err := e.sim.Tasks("pve-1")
	must(t, err)
	equal(t, "its vztemplate task", tasks[0].Type, "vztemplate")
	a = e.call(t, adminToken, "POST", "/nodes/pve-1/lxc/201/template", nil)
	equal(t, "wrong node", a.reason, "Configuration file 'nodes/pve-1/lxc/201.conf' does not exist")
	a = e.call(t, adminToken, "POST", "/nodes/pve-2/lxc/201/template", nil)
	equal(t, "running CT", a.reason, "you can't convert a CT to template if the CT is running")

	e.sim.FailNextTask("vzclone", 101, "zfs error: out of space")
	equal(t, "failed clone", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/lxc/101/clone", form("newid", "161", "snapname", "s1"))), "zfs error: out of space")
	if _, err := e.sim.Guest(161); err == nil {
		t.Fatal("a failed clone left its target")
	}
}

func mac(net string) string {
	for _, p := range strings.Split(net, ",") {
		if k, v, ok := strings.Cut(p, "="); ok && (k == "hwaddr" || k == "virtio") {
			return v
		}
	}
	return ""
}

// TestDestroyGuest: a held copy is deleted (the sweep's first act at start)
// with a destroy task; a template with a linked clone stays.
func TestDestroyGuest(t *testing.T) {
	t.Parallel()
	e := setup(t, frozen())
	a := e.call(t, adminToken, "DELETE", "/nodes/pve-1/lxc/101", nil)
	equal(t, "running CT", a.reason, "unable to destroy CT 101 - container is running")
	equal(t, "clone", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/qemu/102/clone", form("newid", "9100"))), "OK")
	upid := e.upid(t, "DELETE", "/nodes/pve-1/qemu/9100", form("purge", "1"))
	equal(t, "task type", strings.Contains(upid, ":qmdestroy:9100:"), true)
	equal(t, "destroy", e.finish(t, upid), "OK")
	if _, err := e.sim.Guest(9100); err == nil {
		t.Fatal("destroyed guest still there")
	}
	equal(t, "template", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/qemu/102/template", nil)), "OK")
	equal(t, "linked clone", e.finish(t, e.upid(t, "POST", "/nodes/pve-1/qemu/102/clone", form("newid", "9101"))), "OK")
	equal(t, "template in use", e.finish(t, e.upid(t, "DELETE", "/nodes/pve-1/qemu/102", nil)), "base volume 'base-102-disk-0' is still in use by linked cloned")
	must(t, e.sim.SetLock(9101, LockBackup))
	a = e.call(t, adminToken, "DELETE", "/nodes/pve-1/qemu/9101", nil)
	equal(t, "locked", a.reason, "VM is locked (backup)")
}
