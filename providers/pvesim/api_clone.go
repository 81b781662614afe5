package pvesim

import (
	"strconv"
	"strings"
	"time"
)

// maxVMID is the largest guest ID Proxmox accepts (CO JSONSchema.pm
// pve-vmid: 100 to 999999999).
const maxVMID = 999999999

// postClone is POST .../{vmid}/clone (QS API2/Qemu.pm clone_vm, PC
// API2/LXC.pm clone_vm). Permissions: VM.Clone on the source, VM.Allocate
// on /vms/<newid> or /pool/<pool>, Datastore.AllocateSpace on the target
// storage. full defaults to 1 for a guest, 0 for a template. Refusals at
// once: the target exists ("CT 101 already exists on node 'pve'", QEMU
// "unable to create VM 101: config file already exists"), "Full clone of a
// running container is only possible from a snapshot", "parameter 'storage'
// not allowed for linked clones", a locked source. The task's type is
// vzclone/qmclone and its ID the SOURCE vmid; the clone gets new MACs, a
// new smbios1 uuid (QEMU), and no template, parent or snapshots; it keeps
// onboot. While it runs the target has lock=create (LXC) or lock=clone
// (QEMU) and an LXC source lock=disk.
func postClone(c *call) (any, error) {
	r, err := cloneParams(c)
	if err != nil {
		return nil, err
	}
	src, err := c.guest()
	if err != nil {
		return nil, err
	}
	if err := r.checkSource(c, src); err != nil {
		return nil, err
	}
	ng := r.newGuest(c, src)
	return r.startTask(c, src, ng), nil
}

// cloneRequest is one clone asked of the simulator: its parameters, then,
// once checkSource has passed, its source's volume and snapshot and where
// the clone goes.
type cloneRequest struct {
	newid         int
	typ           GuestType
	pool          string
	full          bool
	srcVol        volume
	targetStorage string
	targetNode    string
	sn            *snapshot // the source's snapshot cloned, or nil
	st            *storage  // the target storage on the target node
}

// cloneParams reads a clone's newid, type and pool, refusing what the
// type's schema does not allow, and checks VM.Clone on the source and
// VM.Allocate on the pool or the new vmid.
func cloneParams(c *call) (*cloneRequest, error) {
	s := c.s
	newid, _ := strconv.Atoi(c.str("newid"))
	if newid < 100 || newid > maxVMID {
		return nil, paramErr(map[string]string{"newid": "value must have a minimum value of 100"})
	}
	typ := GuestType(c.vars["type"])
	for _, k := range []string{"hostname"} {
		if typ == QEMU && c.isSet(k) {
			return nil, paramErr(map[string]string{k: "property is not defined in schema and the schema does not allow additional properties"})
		}
	}
	for _, k := range []string{"name", "format"} {
		if typ == LXC && c.isSet(k) {
			return nil, paramErr(map[string]string{k: "property is not defined in schema and the schema does not allow additional properties"})
		}
	}
	if err := s.check(c.who, vmPath(c), "VM.Clone"); err != nil {
		return nil, err
	}
	pool := c.str("pool")
	if pool != "" {
		// AC RPCEnvironment.pm check_pool_exist.
		if !s.pools[pool] {
			return nil, &apiError{status: 403, message: "Permission check failed (pool '" + pool + "' does not exist)"}
		}
		if err := s.check(c.who, "/pool/"+pool, "VM.Allocate"); err != nil {
			return nil, err
		}
	} else if err := s.check(c.who, "/vms/"+itoa(newid), "VM.Allocate"); err != nil {
		return nil, err
	}
	return &cloneRequest{newid: newid, typ: typ, pool: pool}, nil
}

// checkSource decides, from src and the call, whether the clone is full,
// its target storage and node and the snapshot it clones, and refuses at
// once what Proxmox refuses: no Datastore.AllocateSpace, a target node
// without the storage shared, the target vmid taken, a locked source, a
// missing snapshot, a full clone of a running container, a linked clone of
// a guest that is no template, a missing target storage.
func (r *cloneRequest) checkSource(c *call, src *guest) error {
	s, typ := c.s, r.typ
	r.full = !src.isTemplate()
	if c.isSet("full") {
		r.full = c.flag("full")
	}
	r.srcVol, _ = src.rootVolume()
	r.targetStorage = r.srcVol.storage
	if c.isSet("storage") || c.isSet("format") {
		if !r.full {
			return die("parameter 'storage' not allowed for linked clones")
		}
		if c.isSet("storage") {
			r.targetStorage = c.str("storage")
		}
	}
	if err := s.check(c.who, "/storage/"+r.targetStorage, "Datastore.AllocateSpace"); err != nil {
		return err
	}
	r.targetNode = src.node
	if tn := c.str("target"); tn != "" && tn != src.node {
		if s.nodes[tn] == nil {
			return paramErr(map[string]string{"target": "no such cluster node '" + tn + "'"})
		}
		st := s.storages[src.node+"/"+r.targetStorage]
		if st == nil || !st.shared {
			if typ == LXC {
				return die("can't clone CT to node '%s' (CT uses local storage)", tn)
			}
			return die("can't clone VM to node '%s' (VM uses local storage)", tn)
		}
		r.targetNode = tn
	}
	if other := s.guests[r.newid]; other != nil {
		if typ == QEMU && other.node == r.targetNode && other.typ == QEMU {
			return die("unable to create VM %d: config file already exists", r.newid)
		}
		return die("%s %d already exists on node '%s'", other.kind(), r.newid, other.node)
	}
	if l := src.conf["lock"]; l != "" {
		return die("%s is locked (%s)", src.kind(), l)
	}
	if snapname := c.str("snapname"); snapname != "" {
		if r.sn = src.snaps[snapname]; r.sn == nil {
			return die("snapshot '%s' does not exist", snapname)
		}
	}
	if typ == LXC && r.full && src.running && r.sn == nil {
		return die("Full clone of a running container is only possible from a snapshot")
	}
	if !r.full && !src.isTemplate() {
		if typ == LXC {
			// PC API2/LXC.pm clone_vm: volume_has_feature('clone') fails.
			return die("Linked clone feature for '%s:%s' is not available", r.srcVol.storage, r.srcVol.volname)
		}
		// QS API2/Qemu.pm clone_vm: "Linked clone feature is not supported
		// for '<volid>' (<drive>)".
		return die("Linked clone feature is not supported for '%s:%s' (%s)", r.srcVol.storage, r.srcVol.volname, src.diskKey())
	}
	if r.st = s.storages[r.targetNode+"/"+r.targetStorage]; r.st == nil {
		return die("storage '%s' does not exist", r.targetStorage)
	}
	return nil
}

// newGuest makes the new guest at once with its lock, as Proxmox writes
// the target's config before copying the disks: the source's config (or
// its snapshot's) with no template, parent or lock, new MACs, a new smbios1
// uuid (QEMU), the name or hostname asked, and its own volume.
func (r *cloneRequest) newGuest(c *call, src *guest) *guest {
	s, typ := c.s, r.typ
	conf := copyConf(src.conf)
	written := src.written
	if r.sn != nil {
		conf = snapshotConf(r.sn.conf)
		if d, ok := src.conf["description"]; ok {
			conf["description"] = d
		}
		written = r.sn.written
	}
	for _, k := range []string{"template", "parent", "lock"} {
		delete(conf, k)
	}
	ng := &guest{vmid: r.newid, typ: typ, node: r.targetNode, pool: r.pool, conf: conf, snaps: map[string]*snapshot{}}
	if r.full {
		ng.written = written
	}
	for k, v := range conf {
		if strings.HasPrefix(k, "net") {
			conf[k] = s.netString(ng, v)
		}
	}
	if typ == QEMU {
		conf["smbios1"] = "uuid=" + s.newUUID()
		if _, ok := conf["vmgenid"]; ok {
			conf["vmgenid"] = s.newUUID()
		}
		if name := c.str("name"); name != "" {
			conf["name"] = name
		} else {
			conf["name"] = "Copy-of-VM-" + src.name()
		}
	} else if h := c.str("hostname"); h != "" {
		conf["hostname"] = h
	}
	if c.isSet("description") {
		conf["description"] = c.str("description")
	}
	newVol := volumeName(r.st.typ, typ, r.newid, volumeFormat(r.srcVol.volname), false)
	if !r.full {
		newVol = r.srcVol.volname + "/" + newVol[strings.LastIndex(newVol, "/")+1:]
	}
	conf[src.diskKey()] = r.targetStorage + ":" + newVol + ",size=" + formatSize(r.srcVol.size)
	if typ == LXC {
		conf["lock"] = LockCreate
	} else {
		conf["lock"] = LockClone
	}
	s.guests[r.newid] = ng
	return ng
}

// startTask starts the clone's task on the source's node, locking an LXC
// source (lock=disk) while it runs, and gives its UPID. The task frees the
// source's lock and the target's; a full clone past the target storage's
// room fails, and a failed clone's half-made target is destroyed.
func (r *cloneRequest) startTask(c *call, src *guest, ng *guest) string {
	s, typ, full, st := c.s, r.typ, r.full, r.st
	tt := "qmclone"
	if typ == LXC {
		tt = "vzclone"
		src.conf["lock"] = LockDisk
	}
	n := s.nodes[src.node]
	t := s.newTask(n, tt, itoa(src.vmid), c.who, func(t *task, failMsg string) error {
		if typ == LXC && src.conf["lock"] == LockDisk {
			delete(src.conf, "lock")
		}
		if failMsg == "" && full && st.total-s.storageUsed(st) < 0 {
			failMsg = "clone failed: not enough space on storage '" + r.targetStorage + "'"
		}
		if failMsg != "" {
			// The clone's cleanup: the half-made target is destroyed.
			delete(s.guests, r.newid)
			return errorf("%s", failMsg)
		}
		delete(ng.conf, "lock")
		return nil
	})
	t.log = append(t.log, "create "+map[bool]string{true: "full", false: "linked"}[full]+" clone of drive "+src.diskKey()+" ("+r.srcVol.storage+":"+r.srcVol.volname+")")
	if full {
		per4G := realisticCloneQEMUPer4G
		if typ == LXC {
			per4G = realisticCloneLXCPer4G
		}
		s.realistic(t, time.Duration(float64(per4G)*float64(ng.written)/float64(4*gib)))
	}
	return t.upid
}

// postTemplate is POST .../{vmid}/template (VM.Allocate; QS API2/Qemu.pm
// template, PC API2/LXC.pm template). In QS's order: the lock; "unable to
// create template, because VM contains snapshots" (CT for LXC); "you can't
// convert a template to a template"; "you can't convert a VM to template if
// VM is running" (LXC: "you can't convert a CT to template if the CT is
// running"). QEMU answers a qmtemplate UPID; LXC answers null although it
// runs a vztemplate task. The disk becomes a base volume.
func postTemplate(c *call) (any, error) {
	s := c.s
	if err := s.check(c.who, vmPath(c), "VM.Allocate"); err != nil {
		return nil, err
	}
	g, err := c.guest()
	if err != nil {
		return nil, err
	}
	if l := g.conf["lock"]; l != "" {
		return nil, die("%s is locked (%s)", g.kind(), l)
	}
	if len(g.snaps) > 0 {
		return nil, die("unable to create template, because %s contains snapshots", g.kind())
	}
	if g.isTemplate() {
		return nil, die("you can't convert a template to a template")
	}
	if g.running {
		if g.typ == LXC {
			return nil, die("you can't convert a CT to template if the CT is running")
		}
		return nil, die("you can't convert a VM to template if VM is running")
	}
	t := s.startTemplate(g, c.who)
	if g.typ == LXC {
		return nil, nil
	}
	return t.upid, nil
}
