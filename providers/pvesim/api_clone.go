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
	src, err := c.guest()
	if err != nil {
		return nil, err
	}
	full := !src.isTemplate()
	if c.isSet("full") {
		full = c.flag("full")
	}
	srcVol, _ := src.rootVolume()
	targetStorage := srcVol.storage
	if c.isSet("storage") || c.isSet("format") {
		if !full {
			return nil, die("parameter 'storage' not allowed for linked clones")
		}
		if c.isSet("storage") {
			targetStorage = c.str("storage")
		}
	}
	if err := s.check(c.who, "/storage/"+targetStorage, "Datastore.AllocateSpace"); err != nil {
		return nil, err
	}
	targetNode := src.node
	if tn := c.str("target"); tn != "" && tn != src.node {
		if s.nodes[tn] == nil {
			return nil, paramErr(map[string]string{"target": "no such cluster node '" + tn + "'"})
		}
		st := s.storages[src.node+"/"+targetStorage]
		if st == nil || !st.shared {
			if typ == LXC {
				return nil, die("can't clone CT to node '%s' (CT uses local storage)", tn)
			}
			return nil, die("can't clone VM to node '%s' (VM uses local storage)", tn)
		}
		targetNode = tn
	}
	if other := s.guests[newid]; other != nil {
		if typ == QEMU && other.node == targetNode && other.typ == QEMU {
			return nil, die("unable to create VM %d: config file already exists", newid)
		}
		return nil, die("%s %d already exists on node '%s'", other.kind(), newid, other.node)
	}
	if l := src.conf["lock"]; l != "" {
		return nil, die("%s is locked (%s)", src.kind(), l)
	}
	snapname := c.str("snapname")
	var sn *snapshot
	if snapname != "" {
		if sn = src.snaps[snapname]; sn == nil {
			return nil, die("snapshot '%s' does not exist", snapname)
		}
	}
	if typ == LXC && full && src.running && sn == nil {
		return nil, die("Full clone of a running container is only possible from a snapshot")
	}
	if !full && !src.isTemplate() {
		if typ == LXC {
			// PC API2/LXC.pm clone_vm: volume_has_feature('clone') fails.
			return nil, die("Linked clone feature for '%s:%s' is not available", srcVol.storage, srcVol.volname)
		}
		// QS API2/Qemu.pm clone_vm: "Linked clone feature is not supported
		// for '<volid>' (<drive>)".
		return nil, die("Linked clone feature is not supported for '%s:%s' (%s)", srcVol.storage, srcVol.volname, src.diskKey())
	}
	st := s.storages[targetNode+"/"+targetStorage]
	if st == nil {
		return nil, die("storage '%s' does not exist", targetStorage)
	}

	// The new guest, made at once with its lock as Proxmox writes the
	// target's config before copying the disks.
	conf := copyConf(src.conf)
	written := src.written
	if sn != nil {
		conf = snapshotConf(sn.conf)
		if d, ok := src.conf["description"]; ok {
			conf["description"] = d
		}
		written = sn.written
	}
	for _, k := range []string{"template", "parent", "lock"} {
		delete(conf, k)
	}
	ng := &guest{vmid: newid, typ: typ, node: targetNode, pool: pool, conf: conf, snaps: map[string]*snapshot{}}
	if full {
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
	newVol := volumeName(st.typ, typ, newid, volumeFormat(srcVol.volname), false)
	if !full {
		newVol = srcVol.volname + "/" + newVol[strings.LastIndex(newVol, "/")+1:]
	}
	conf[src.diskKey()] = targetStorage + ":" + newVol + ",size=" + formatSize(srcVol.size)
	if typ == LXC {
		conf["lock"] = LockCreate
	} else {
		conf["lock"] = LockClone
	}
	s.guests[newid] = ng

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
			failMsg = "clone failed: not enough space on storage '" + targetStorage + "'"
		}
		if failMsg != "" {
			// The clone's cleanup: the half-made target is destroyed.
			delete(s.guests, newid)
			return errorf("%s", failMsg)
		}
		delete(ng.conf, "lock")
		return nil
	})
	t.log = append(t.log, "create "+map[bool]string{true: "full", false: "linked"}[full]+" clone of drive "+src.diskKey()+" ("+srcVol.storage+":"+srcVol.volname+")")
	if full {
		per4G := realisticCloneQEMUPer4G
		if typ == LXC {
			per4G = realisticCloneLXCPer4G
		}
		s.realistic(t, time.Duration(float64(per4G)*float64(ng.written)/float64(4*gib)))
	}
	return t.upid, nil
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

func (s *Sim) startTemplate(g *guest, who *principal) *task {
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
