package pvesim

import (
	"strconv"
	"strings"
)

// guest finds the path's guest on the path's node as load_config does (GC
// AbstractConfig.pm load_config; the file lives under the node's folder),
// with Proxmox's words when it is not there.
func (c *call) guest() (*guest, error) {
	vmid, _ := strconv.Atoi(c.vars["vmid"])
	typ := GuestType(c.vars["type"])
	g := c.s.guests[vmid]
	if g == nil || g.node != c.vars["node"] || g.typ != typ {
		dir := "lxc"
		if typ == QEMU {
			dir = "qemu-server"
		}
		return nil, die("Configuration file 'nodes/%s/%s/%d.conf' does not exist", c.vars["node"], dir, vmid)
	}
	return g, nil
}

func vmPath(c *call) string { return "/vms/" + c.vars["vmid"] }

// getGuests is GET /nodes/{node}/lxc and /qemu (PC API2/LXC.pm vmlist, QS
// API2/Qemu.pm vmlist): each guest the caller may audit (VM.Audit).
func getGuests(c *call) (any, error) {
	var out []map[string]any
	for _, g := range c.s.sortedGuests() {
		if g.node != c.vars["node"] || string(g.typ) != c.vars["type"] {
			continue
		}
		if !c.s.has(c.who, "/vms/"+itoa(g.vmid), "VM.Audit") {
			continue
		}
		out = append(out, c.s.guestListJSON(g))
	}
	return nonNil(out), nil
}

// getGuestStatus is GET .../{vmid}/status/current (VM.Audit): the list
// item plus ha, and QEMU's qmpstatus (a paused VM is "running" with
// qmpstatus "paused").
func getGuestStatus(c *call) (any, error) {
	if err := c.s.check(c.who, vmPath(c), "VM.Audit"); err != nil {
		return nil, err
	}
	g, err := c.guest()
	if err != nil {
		return nil, err
	}
	m := c.s.guestListJSON(g)
	m["ha"] = map[string]any{"managed": 0}
	if g.typ == QEMU {
		m["qmpstatus"] = m["status"]
		if g.paused {
			m["qmpstatus"] = "paused"
		}
	}
	return m, nil
}

// postPower is POST .../status/{start|stop|shutdown|suspend|resume}
// (VM.PowerMgmt). LXC refuses synchronously what cannot be done ("CT 100
// already running", "CT 100 not running"; PC API2/LXC/Status.pm); QEMU
// fails inside the task ("VM 100 already running"), and a stop or shutdown
// of a stopped VM ends OK (QS API2/Qemu.pm vm_stop). Lock checks run in
// the task.
func postPower(c *call) (any, error) {
	if err := c.s.check(c.who, vmPath(c), "VM.PowerMgmt"); err != nil {
		return nil, err
	}
	g, err := c.guest()
	if err != nil {
		return nil, err
	}
	action := c.vars["action"]
	if c.isSet("skiplock") && !c.who.root {
		return nil, paramErr(map[string]string{"skiplock": "Only root may use this option."})
	}
	if g.typ == QEMU && (action == "suspend" || action == "resume") && !g.running {
		// QS API2/Qemu.pm vm_suspend / vm_resume check at once.
		return nil, die("VM %d not running", g.vmid)
	}
	if g.typ == LXC {
		switch {
		case action == "start" && g.running:
			return nil, die("CT %d already running", g.vmid)
		case action != "start" && !g.running:
			return nil, die("CT %d not running", g.vmid)
		}
	}
	typ := map[string]string{"start": "start", "stop": "stop", "shutdown": "shutdown", "suspend": "suspend", "resume": "resume"}[action]
	if g.typ == LXC {
		typ = "vz" + typ
	} else {
		typ = map[string]string{"start": "qmstart", "stop": "qmstop", "shutdown": "qmshutdown", "suspend": "qmpause", "resume": "qmresume"}[action]
		if action == "suspend" && c.flag("todisk") {
			typ = "qmsuspend"
		}
	}
	s := c.s
	n := s.nodes[g.node]
	t := s.newTask(n, typ, itoa(g.vmid), c.who, func(t *task, failMsg string) error {
		if failMsg != "" {
			return errorf("%s", failMsg)
		}
		s.applyPower(g, action)
		return nil
	})
	// Inside the worker (PC API2/LXC/Status.pm vm_start, QS QemuServer.pm
	// vm_start): a template never starts; then the lock.
	if action == "start" && g.isTemplate() {
		if g.typ == LXC {
			s.failTask(t, "you can't start a CT if it's a template")
		} else {
			s.failTask(t, "you can't start a vm if it's a template")
		}
		return t.upid, nil
	}
	if l := g.conf["lock"]; l != "" && action != "stop" && !(c.flag("skiplock") && c.who.root) {
		s.failTask(t, g.kind()+" is locked ("+l+")")
		return t.upid, nil
	}
	if g.typ == QEMU && action == "start" && g.running {
		s.failTask(t, "VM "+itoa(g.vmid)+" already running")
	}
	return t.upid, nil
}

// getConfig is GET .../{vmid}/config (VM.Audit; QS API2/Qemu.pm
// vm_config, PC API2/LXC/Config.pm vm_config): the current config with
// digest, or with snapshot=<name> that snapshot's.
func getConfig(c *call) (any, error) {
	if err := c.s.check(c.who, vmPath(c), "VM.Audit"); err != nil {
		return nil, err
	}
	g, err := c.guest()
	if err != nil {
		return nil, err
	}
	if name := c.str("snapshot"); name != "" {
		sn := g.snaps[name]
		if sn == nil {
			return nil, die("snapshot '%s' does not exist", name)
		}
		m := g.confJSON(sn.sectionConf())
		m["digest"] = g.digest()
		return m, nil
	}
	m := g.confJSON(g.conf)
	m["digest"] = g.digest()
	return m, nil
}

// configPriv is the privilege a config key needs (QS API2/Qemu.pm
// check_vm_modify_config_perm; PC LXC.pm check_ct_modify_config_perm).
func configPriv(key string) string {
	switch {
	case strings.HasPrefix(key, "net"):
		return "VM.Config.Network"
	case key == "cores" || key == "sockets" || key == "cpulimit":
		return "VM.Config.CPU"
	case key == "memory" || key == "swap":
		return "VM.Config.Memory"
	case key == "smbios1":
		return "VM.Config.HWType"
	}
	return "VM.Config.Options"
}

// putConfig is PUT .../{vmid}/config: checks each key's privilege, the
// digest ("checksum mismatch (file change by other user?)" on QEMU,
// "detected modified configuration - file changed by other user? Try
// again." on LXC), and the lock ("VM is locked (snapshot)"); only root may
// set or delete lock. Answers null. A running QEMU guest's changes apply at
// once here (Proxmox would keep some pending until a restart).
func putConfig(c *call) (any, error) {
	s := c.s
	keys := map[string]string{}
	for k, v := range c.params {
		if k == "digest" || k == "delete" || k == "skiplock" || k == "revert" {
			continue
		}
		keys[k] = v
	}
	var deletes []string
	for _, d := range strings.Split(c.str("delete"), ",") {
		if d = strings.TrimSpace(d); d != "" {
			deletes = append(deletes, d)
		}
	}
	for _, k := range append(sortedKeys(keys), deletes...) {
		if k == "lock" {
			if !c.who.root {
				return nil, die("only root can set 'lock' config")
			}
			continue
		}
		if _, ok := configParams()[k]; !ok {
			return nil, paramErr(map[string]string{"delete": "invalid configuration option '" + k + "'"})
		}
		if err := s.check(c.who, vmPath(c), configPriv(k)); err != nil {
			return nil, err
		}
	}
	if c.isSet("skiplock") && !c.who.root {
		return nil, paramErr(map[string]string{"skiplock": "Only root may use this option."})
	}
	g, err := c.guest()
	if err != nil {
		return nil, err
	}
	if d := c.str("digest"); d != "" && d != g.digest() {
		if g.typ == QEMU {
			return nil, die("checksum mismatch (file change by other user?)")
		}
		return nil, die("detected modified configuration - file changed by other user? Try again.")
	}
	if l := g.conf["lock"]; l != "" && !c.flag("skiplock") {
		return nil, die("%s is locked (%s)", g.kind(), l)
	}
	if len(c.str("description")) > descriptionMax {
		return nil, paramErr(map[string]string{"description": "value may only be 8192 characters long"})
	}
	if m := c.str("memory"); m != "" && g.typ == LXC {
		if msg := checkType(pInt, m); msg != "" {
			return nil, paramErr(map[string]string{"memory": msg})
		}
	}
	for k, v := range keys {
		switch k {
		case "tags":
			v = normTags(v)
		case "hostname":
			if g.typ != LXC {
				return nil, paramErr(map[string]string{k: "property is not defined in schema and the schema does not allow additional properties"})
			}
		case "name", "smbios1":
			if g.typ != QEMU {
				return nil, paramErr(map[string]string{k: "property is not defined in schema and the schema does not allow additional properties"})
			}
		}
		g.conf[k] = v
	}
	for _, k := range deletes {
		delete(g.conf, k)
	}
	return nil, nil
}

// configParams are the config keys PUT .../config accepts here (QS
// API2/Qemu.pm update_vm / PC API2/LXC/Config.pm update_vm; the simulator
// keeps the ones a snapshot manager touches).
func configParams() map[string]ptype {
	m := map[string]ptype{
		"description": pString, "onboot": pBool, "tags": pString, "cores": pInt, "memory": pString, "swap": pInt,
		"name": pString, "hostname": pString, "lock": pString, "delete": pString, "digest": pString, "smbios1": pString,
		"ostype": pString, "protection": pBool, "startup": pString, "revert": pString, "skiplock": pBool,
	}
	for i := range 10 {
		m["net"+itoa(i)] = pString
	}
	return m
}
