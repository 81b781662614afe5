package pvesim

import (
	"context"
	"crypto/tls"
	"net/http"
	"strings"
	"testing"
	"time"

	telmate "github.com/Telmate/proxmox-api-go/proxmox"
	goproxmox "github.com/luthermonson/go-proxmox"
)

// telmateTimeout is the Telmate client's task timeout in seconds.
const telmateTimeout = 30

func telmateClient(t *testing.T, e *env, tokenID, secret string) *telmate.Client {
	t.Helper()
	c, err := telmate.NewClient(e.base+apiPrefix, nil, "", e.sim.TLSConfig(), "", telmateTimeout)
	must(t, err)
	c.SetAPIToken(tokenID, secret)
	return c
}

// TestTelmateClient drives the simulator through the client the Proxmox
// provider uses, over HTTPS with the certificate verified.
func TestTelmateClient(t *testing.T) {
	t.Parallel()
	e := setup(t, instant())
	ctx := context.Background()
	c := telmateClient(t, e, adminToken, testSecret)

	v, err := c.GetVersion(ctx)
	must(t, err)
	equal(t, "version major", v.Major, uint8(9))

	guests, err := telmate.ListGuests(ctx, c)
	must(t, err)
	equal(t, "guests listed", len(guests), 5)
	res, err := guests.SelectID(101)
	must(t, err)
	g := res.Get()
	equal(t, "101 node", string(g.Node), "pve-1")
	equal(t, "101 type", string(g.Type), "lxc")
	equal(t, "101 name", string(g.Name), "amber-fox")

	vmr := telmate.NewVmRef(102)
	conf, err := c.GetVmConfig(ctx, vmr)
	must(t, err)
	equal(t, "102 scsi0", conf["scsi0"], any("local-lvm:vm-102-disk-0,size=32G"))
	if d, _ := conf["digest"].(string); len(d) != 40 {
		t.Fatalf("config digest %q is not a SHA-1", d)
	}

	// Snapshot of a QEMU guest, listed, described, rolled back, deleted.
	must(t, telmate.ConfigSnapshot{Name: "before-upgrade", Description: "by boxsnap"}.Create(ctx, c, vmr))
	raw, err := telmate.ListSnapshots(ctx, c, vmr)
	must(t, err)
	list := raw.FormatSnapshotsList()
	equal(t, "snapshots listed (with current)", len(list), 2)
	equal(t, "first snapshot", string(list[0].Name), "before-upgrade")
	equal(t, "listing ends with", string(list[1].Name), "current")
	equal(t, "current's parent", string(list[1].Parent), "before-upgrade")
	must(t, telmate.UpdateSnapshotDescription(ctx, c, vmr, "before-upgrade", "kept"))
	exit, err := telmate.RollbackSnapshot(ctx, c, vmr, "before-upgrade")
	must(t, err)
	equal(t, "rollback exit status", exit, "OK")
	exit, err = telmate.DeleteSnapshot(ctx, c, vmr, "before-upgrade")
	must(t, err)
	equal(t, "delete exit status", exit, "OK")
	gi := e.guest(t, 102)
	equal(t, "snapshots left", len(gi.Snapshots), 0)
	equal(t, "parent left", gi.Parent, "")

	// The Telmate client sends vmstate=0 with every snapshot; Proxmox's LXC
	// schema has no vmstate, so ConfigSnapshot.Create fails on a container
	// (as it does on a real Proxmox VE 9); a plain POST works.
	lxc := telmate.NewVmRef(101)
	err = telmate.ConfigSnapshot{Name: "first"}.Create(ctx, c, lxc)
	if err == nil || !strings.Contains(err.Error(), "400 Parameter verification failed.") {
		t.Fatalf("LXC snapshot with vmstate: err %v, want 400 Parameter verification failed.", err)
	}
	must(t, c.CheckVmRef(ctx, lxc))
	exit, err = c.PostWithTask(ctx, map[string]any{"snapname": "first", "description": "lxc"}, "/nodes/pve-1/lxc/101/snapshot/")
	must(t, err)
	equal(t, "LXC snapshot exit status", exit, "OK")
	equal(t, "LXC parent", e.guest(t, 101).Parent, "first")

	// A task's status by UPID.
	tasks, err := c.GetItemList(ctx, "/nodes/pve-1/tasks?typefilter=vzsnapshot")
	must(t, err)
	items, _ := tasks["data"].([]any)
	if len(items) != 1 {
		t.Fatalf("vzsnapshot tasks: %d, want 1", len(items))
	}
	upid := items[0].(map[string]any)["upid"].(string)
	exitSt, err := c.GetTaskExitstatus(ctx, upid)
	must(t, err)
	equal(t, "task exit status", exitSt, any("OK"))

	// Clone, template, power, storage: the calls a held copy makes.
	newID := telmate.GuestID(9050)
	src := telmate.NewVmRef(102)
	must(t, c.CheckVmRef(ctx, src)) // the clone calls use the ref's node as it is
	_, err = src.CloneQemu(ctx, telmate.CloneQemuTarget{Full: &telmate.CloneQemuFull{Node: "pve-1", ID: &newID}}, c)
	must(t, err)
	equal(t, "clone made", e.guest(t, 9050).Lock, "")
	must(t, c.CreateTemplate(ctx, telmate.NewVmRef(9050)))
	equal(t, "QEMU template", e.guest(t, 9050).Template, true)
	lxcCopy := telmate.GuestID(9051)
	_, err = lxc.CloneLxc(ctx, telmate.CloneLxcTarget{Full: &telmate.CloneLxcFull{Node: "pve-1", ID: &lxcCopy}}, c)
	if err == nil || !strings.Contains(err.Error(), "Full clone of a running container is only possible from a snapshot") {
		t.Fatalf("full clone of a running CT: err %v", err)
	}
	must(t, telmate.NewVmRef(101).Stop(ctx, c))
	equal(t, "stopped", e.guest(t, 101).Running, false)
	_, err = lxc.CloneLxc(ctx, telmate.CloneLxcTarget{Full: &telmate.CloneLxcFull{Node: "pve-1", ID: &lxcCopy}}, c)
	must(t, err)
	must(t, c.CreateTemplate(ctx, telmate.NewVmRef(9051)))
	e.sim.Advance(time.Second) // LXC's template answers null; its task still runs.
	equal(t, "LXC template", e.guest(t, 9051).Template, true)
	_, err = c.StartVm(ctx, telmate.NewVmRef(101))
	must(t, err)
	equal(t, "started", e.guest(t, 101).Running, true)
	st, err := c.GetStorageStatus(ctx, telmate.NewVmRef(101), "local-lvm")
	must(t, err)
	equal(t, "storage type", st["type"], any("lvmthin"))

	// A refusal: the audit token may read but not snapshot.
	ro := telmateClient(t, e, auditToken, auditSecret)
	err = telmate.ConfigSnapshot{Name: "nope"}.Create(ctx, ro, telmate.NewVmRef(102))
	if err == nil || !strings.Contains(err.Error(), "403 Permission check failed (/vms/102, VM.Snapshot)") {
		t.Fatalf("audit token snapshot: err %v, want 403 Permission check failed (/vms/102, VM.Snapshot)", err)
	}
	must(t, ro.RefreshPermissions(ctx))
	err = ro.CheckPermissions(ctx, []telmate.Permission{{Category: telmate.PermissionCategory_Guest, Privileges: telmate.Privileges{VMSnapshot: true}}})
	if err == nil || !strings.HasPrefix(err.Error(), telmate.PermissionErrorPrefix) {
		t.Fatalf("CheckPermissions VM.Snapshot for the audit token: err %v, want a permission error", err)
	}
	must(t, ro.CheckPermissions(ctx, []telmate.Permission{{Category: telmate.PermissionCategory_Guest, Privileges: telmate.Privileges{VMAudit: true}}}))
}

// TestGoProxmoxClient drives the simulator through a second, independent
// client (luthermonson/go-proxmox), which sends JSON bodies.
func TestGoProxmoxClient(t *testing.T) {
	t.Parallel()
	e := setup(t, instant())
	ctx := context.Background()
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: e.sim.TLSConfig()}, Timeout: 10 * time.Second}
	c := goproxmox.NewClient(e.base+apiPrefix, goproxmox.WithHTTPClient(hc), goproxmox.WithAPIToken(adminToken, testSecret))

	v, err := c.Version(ctx)
	must(t, err)
	if !strings.Contains(v.Release, "pvesim") {
		t.Fatalf("release %q does not say pvesim", v.Release)
	}
	nodes, err := c.Nodes(ctx)
	must(t, err)
	equal(t, "nodes", len(nodes), 2)
	n, err := c.Node(ctx, "pve-1")
	must(t, err)
	cts, err := n.Containers(ctx)
	must(t, err)
	equal(t, "containers on pve-1", len(cts), 2)
	vms, err := n.VirtualMachines(ctx)
	must(t, err)
	equal(t, "VMs on pve-1", len(vms), 1)
	equal(t, "VM name", vms[0].Name, "quiet-owl")

	vm, err := n.VirtualMachine(ctx, 102)
	must(t, err)
	equal(t, "VM status", vm.Status, "stopped")
	equal(t, "VM smbios1 read", strings.HasPrefix(vm.VirtualMachineConfig.SMBios1, "uuid="), true)
	vmTask, err := vm.NewSnapshot(ctx, "vm-snap")
	must(t, err)
	must(t, vmTask.Ping(ctx))
	equal(t, "VM snapshot exit status", vmTask.ExitStatus, "OK")
	vmSnaps, err := vm.Snapshots(ctx)
	must(t, err)
	equal(t, "VM snapshots (with current)", len(vmSnaps), 2)

	ct, err := n.Container(ctx, 101)
	must(t, err)
	equal(t, "container status", ct.Status, "running")
	equal(t, "container hostname", ct.ContainerConfig.Hostname, "amber-fox")

	task, err := ct.NewSnapshot(ctx, "from-goproxmox")
	must(t, err)
	must(t, task.Ping(ctx))
	if !task.IsCompleted || !task.IsSuccessful {
		t.Fatalf("snapshot task: completed %v successful %v exit %q", task.IsCompleted, task.IsSuccessful, task.ExitStatus)
	}
	log, err := task.Log(ctx, 0, 50)
	must(t, err)
	if len(log) == 0 || log[len(log)-1] != "TASK OK" {
		t.Fatalf("task log %v does not end with TASK OK", log)
	}
	snaps, err := ct.Snapshots(ctx)
	must(t, err)
	equal(t, "snapshots (with current)", len(snaps), 2)
	equal(t, "snapshot name", snaps[0].Name, "from-goproxmox")

	task, err = ct.Snapshot("from-goproxmox").Rollback(ctx, true)
	must(t, err)
	must(t, task.Ping(ctx))
	equal(t, "rollback exit status", task.ExitStatus, "OK")
	equal(t, "running after rollback with start", e.guest(t, 101).Running, true)

	task, err = ct.Snapshot("from-goproxmox").Delete(ctx)
	must(t, err)
	must(t, task.Ping(ctx))
	equal(t, "delete exit status", task.ExitStatus, "OK")
	snaps, err = ct.Snapshots(ctx)
	must(t, err)
	equal(t, "snapshots after delete", len(snaps), 1)
}

// TestTLSVerified: the simulator's certificate is trusted only through
// TLSConfig; a client with the system's roots refuses it.
func TestTLSVerified(t *testing.T) {
	t.Parallel()
	e := setup(t, instant())
	plain := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12}}}
	_, err := plain.Get(e.base + apiPrefix + "/version")
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("untrusted client: err %v, want a certificate error", err)
	}
	a := e.call(t, adminToken, "GET", "/version", nil)
	equal(t, "trusted client status", a.status, http.StatusOK)
}
