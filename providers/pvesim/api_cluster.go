package pvesim

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// getVersion is GET /version (PM API2/Version.pm: version, release,
// repoid). The release names the simulator, so no one mistakes it.
func getVersion(c *call) (any, error) {
	return map[string]any{"version": simulatorVersion, "release": simulatorRelease, "repoid": "pvesim-simulator"}, nil
}

// postTicket is POST /access/ticket (AC API2/AccessControl.pm
// create_ticket): username (with @realm, or realm apart) and password give
// {username, ticket, CSRFPreventionToken, cap}. A wrong password is 401
// "authentication failure".
func postTicket(c *call) (any, error) {
	s := c.s
	user := c.str("username")
	if realm := c.str("realm"); realm != "" && !strings.Contains(user, "@") {
		user += "@" + realm
	}
	p := s.users[user]
	if p == nil || p.password == "" || p.password != c.str("password") {
		return nil, &apiError{status: http.StatusUnauthorized, message: "authentication failure"}
	}
	now := s.clock.now()
	sig, err := randomHex(32)
	if err != nil {
		return nil, fmt.Errorf("pvesim: ticket: %w", err)
	}
	// AC AccessControl.pm assemble_ticket: PVE:<user>:<hex time>::<signature>.
	tk := fmt.Sprintf("PVE:%s:%08X::%s", user, now.Unix(), base64.RawStdEncoding.EncodeToString([]byte(sig)))
	csrfSig, err := randomHex(16)
	if err != nil {
		return nil, fmt.Errorf("pvesim: csrf: %w", err)
	}
	csrf := fmt.Sprintf("%08X:%s", now.Unix(), csrfSig)
	s.tickets[tk] = ticket{user: user, expires: now.Add(ticketLifetime)}
	s.csrf[tk] = csrf
	return map[string]any{
		"username":            user,
		"ticket":              tk,
		"CSRFPreventionToken": csrf,
		"cap":                 map[string]any{},
		"clustername":         "pvesim",
	}, nil
}

// getPermissions is GET /access/permissions (AC API2/AccessControl.pm
// permissions). Asking for another user's needs Sys.Audit on /access.
func getPermissions(c *call) (any, error) {
	who := c.who
	if uid := c.str("userid"); uid != "" && uid != who.id {
		// A user may read its own tokens'; anyone else's needs Sys.Audit.
		if owner, _, isToken := strings.Cut(uid, "!"); !isToken || owner != who.id {
			if err := c.s.check(who, "/access", "Sys.Audit"); err != nil {
				return nil, err
			}
		}
		p := c.s.tokens[uid]
		if p == nil {
			p = c.s.users[uid]
		}
		if p == nil {
			return nil, paramErr(map[string]string{"userid": "no such user/token '" + uid + "'"})
		}
		who = p
	}
	return c.s.permissionsJSON(who, c.str("path")), nil
}

// getNodes is GET /nodes (PM API2/Nodes.pm index): every node with its
// status; cpu, mem, disk and uptime only with Sys.Audit on /nodes/<n>. A
// node cut off is "offline".
func getNodes(c *call) (any, error) {
	var out []map[string]any
	for _, name := range sortedKeys(c.s.nodes) {
		n := c.s.nodes[name]
		item := map[string]any{"id": "node/" + name, "node": name, "type": "node", "status": "online", "level": ""}
		if n.cut {
			item["status"] = "offline"
		} else if c.s.has(c.who, "/nodes/"+name, "Sys.Audit") {
			item["uptime"] = int64(c.s.clock.now().Sub(n.bootAt).Seconds())
			item["cpu"] = 0.02
			item["maxcpu"] = 8
			item["mem"] = 4 * gib
			item["maxmem"] = 32 * gib
			item["disk"] = 8 * gib
			item["maxdisk"] = 100 * gib
		}
		out = append(out, item)
	}
	return nonNil(out), nil
}

// getNodeStatus is GET /nodes/{node}/status (PM API2/Nodes.pm status;
// Sys.Audit on /nodes/{node}).
func getNodeStatus(c *call) (any, error) {
	name := c.vars["node"]
	if err := c.s.check(c.who, "/nodes/"+name, "Sys.Audit"); err != nil {
		return nil, err
	}
	n := c.s.nodes[name]
	return map[string]any{
		"uptime":     int64(c.s.clock.now().Sub(n.bootAt).Seconds()),
		"cpu":        0.02,
		"pveversion": "pve-manager/" + simulatorVersion + "/pvesim-simulator",
		"kversion":   "Linux 6.14.8-2-pve (pvesim simulator)",
		"memory":     map[string]any{"total": 32 * gib, "used": 4 * gib, "free": 28 * gib},
		"rootfs":     map[string]any{"total": 100 * gib, "used": 8 * gib, "free": 92 * gib, "avail": 92 * gib},
		"cpuinfo":    map[string]any{"cpus": 8, "model": "pvesim simulated CPU", "sockets": 1, "cores": 8},
	}, nil
}

// getClusterResources is GET /cluster/resources (PM API2/Cluster.pm
// resources): with type=vm the guests, each only with VM.Audit on
// /vms/<vmid>; a guest on an unreachable node shows status "unknown".
func getClusterResources(c *call) (any, error) {
	typ := c.str("type")
	if typ != "" && typ != "vm" && typ != "node" && typ != "storage" && typ != "sdn" && typ != "pool" {
		return nil, paramErr(map[string]string{"type": "value '" + typ + "' does not have a value in the enumeration 'vm, storage, node, sdn'"})
	}
	s := c.s
	var out []map[string]any
	if typ == "" || typ == "vm" {
		for _, g := range s.sortedGuests() {
			if !s.has(c.who, "/vms/"+itoa(g.vmid), "VM.Audit") {
				continue
			}
			item := s.guestListJSON(g)
			item["id"] = string(g.typ) + "/" + itoa(g.vmid)
			item["type"] = string(g.typ)
			item["node"] = g.node
			item["template"] = boolInt(g.isTemplate())
			item["maxcpu"] = item["cpus"]
			delete(item, "cpus")
			if g.pool != "" {
				item["pool"] = g.pool
			}
			if s.nodes[g.node].cut {
				item["status"] = "unknown"
			}
			out = append(out, item)
		}
	}
	if typ == "" || typ == "node" {
		for _, name := range sortedKeys(s.nodes) {
			st := "online"
			if s.nodes[name].cut {
				st = "offline"
			}
			out = append(out, map[string]any{"id": "node/" + name, "type": "node", "node": name, "status": st})
		}
	}
	if typ == "" || typ == "storage" {
		for _, key := range sortedKeys(s.storages) {
			st := s.storages[key]
			if !s.has(c.who, "/storage/"+st.id, "Datastore.Audit") && !s.has(c.who, "/storage/"+st.id, "Datastore.AllocateSpace") {
				continue
			}
			used := s.storageUsed(st)
			out = append(out, map[string]any{"id": "storage/" + st.node + "/" + st.id, "type": "storage", "storage": st.id,
				"node": st.node, "plugintype": st.typ, "status": "available", "disk": used, "maxdisk": st.total, "content": st.content, "shared": boolInt(st.shared)})
		}
	}
	return nonNil(out), nil
}

// getNextID is GET /cluster/nextid (PM API2/Cluster.pm nextid).
func getNextID(c *call) (any, error) {
	if c.isSet("vmid") {
		id := c.num("vmid", 0)
		if g := c.s.guests[id]; g != nil {
			return nil, paramErr(map[string]string{"vmid": fmt.Sprintf("VM %d already exists", id)})
		}
		return itoa(id), nil
	}
	for id := 100; ; id++ {
		if c.s.guests[id] == nil {
			return itoa(id), nil
		}
	}
}

// getStorageList is GET /storage (PM/PS API2/Storage/Config.pm index):
// one entry per storage ID, with the nodes that have it.
func getStorageList(c *call) (any, error) {
	s := c.s
	byID := map[string][]*storage{}
	for _, st := range s.storages {
		byID[st.id] = append(byID[st.id], st)
	}
	var out []map[string]any
	for _, id := range sortedKeys(byID) {
		sts := byID[id]
		if c.str("type") != "" && sts[0].typ != c.str("type") {
			continue
		}
		if !s.has(c.who, "/storage/"+id, "Datastore.Audit") && !s.has(c.who, "/storage/"+id, "Datastore.AllocateSpace") {
			continue
		}
		st := sts[0]
		var nodes []string
		for _, x := range sts {
			nodes = append(nodes, x.node)
		}
		sort.Strings(nodes)
		item := map[string]any{"storage": id, "type": st.typ, "content": st.content, "digest": shortDigest(id + st.typ),
			"nodes": strings.Join(nodes, ",")}
		if st.shared {
			item["shared"] = 1
		}
		for k, v := range map[string]string{"path": st.path, "vgname": st.vgname, "thinpool": st.thin, "pool": st.pool} {
			if v != "" {
				item[k] = v
			}
		}
		out = append(out, item)
	}
	return nonNil(out), nil
}

// getNodeStorages is GET /nodes/{node}/storage (PS API2/Storage/Status.pm
// index), the node's storages with their status.
func getNodeStorages(c *call) (any, error) {
	s := c.s
	var out []map[string]any
	for _, key := range sortedKeys(s.storages) {
		st := s.storages[key]
		if st.node != c.vars["node"] {
			continue
		}
		if !s.has(c.who, "/storage/"+st.id, "Datastore.Audit") && !s.has(c.who, "/storage/"+st.id, "Datastore.AllocateSpace") {
			continue
		}
		item := s.storageStatusJSON(st)
		item["storage"] = st.id
		out = append(out, item)
	}
	return nonNil(out), nil
}

// getStorageStatus is GET /nodes/{node}/storage/{storage}/status (PS
// API2/Storage/Status.pm read_status; Datastore.Audit or
// Datastore.AllocateSpace): an unknown storage is 400 "No such storage.".
func getStorageStatus(c *call) (any, error) {
	id := c.vars["storage"]
	if err := c.s.checkAny(c.who, "/storage/"+id, "Datastore.Audit", "Datastore.AllocateSpace"); err != nil {
		return nil, err
	}
	st := c.s.storages[c.vars["node"]+"/"+id]
	if st == nil {
		return nil, paramErr(map[string]string{"storage": "No such storage."})
	}
	return c.s.storageStatusJSON(st), nil
}

func (s *cluster) storageStatusJSON(st *storage) map[string]any {
	m := map[string]any{"type": st.typ, "content": st.content, "shared": boolInt(st.shared), "active": boolInt(st.active), "enabled": 1,
		"total": int64(0), "used": int64(0), "avail": int64(0)}
	if st.active {
		used := s.storageUsed(st)
		m["total"], m["used"], m["avail"] = st.total, used, max(st.total-used, 0)
	}
	return m
}

// getLVMThin is GET /nodes/{node}/disks/lvmthin (PM API2/Disks/LVMThin.pm
// index; Sys.Audit on /): each thin pool with its metadata use.
func getLVMThin(c *call) (any, error) {
	if err := c.s.check(c.who, "/", "Sys.Audit"); err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, key := range sortedKeys(c.s.storages) {
		st := c.s.storages[key]
		if st.node != c.vars["node"] || st.typ != StorageLVMThin {
			continue
		}
		out = append(out, map[string]any{"lv": st.thin, "vg": st.vgname, "lv_size": st.total, "used": c.s.storageUsed(st),
			"metadata_size": thinMetadataSize, "metadata_used": c.s.thinMetadataUsed(st)})
	}
	return nonNil(out), nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func shortDigest(s string) string {
	h := uint64(1469598103934665603)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return fmt.Sprintf("%016x%016x", h, h*31)[:40]
}

// nonNil keeps an empty list a JSON [] rather than null.
func nonNil(l []map[string]any) []map[string]any {
	if l == nil {
		return []map[string]any{}
	}
	return l
}

// guestListJSON is one guest as the node's list shows it (QS
// QemuServer.pm vmstatus / PC LXC.pm vmstatus): template and lock only
// when set; QEMU's disk use is not known to the host (0).
func (s *cluster) guestListJSON(g *guest) map[string]any {
	vol, _ := g.rootVolume()
	memMiB, _ := strconv.ParseInt(strings.TrimPrefix(g.conf["memory"], "current="), 10, 64)
	cores, _ := strconv.Atoi(g.conf["cores"])
	m := map[string]any{
		"vmid":      g.vmid,
		"name":      g.name(),
		"status":    "stopped",
		"maxmem":    memMiB * mib,
		"mem":       int64(0),
		"maxdisk":   vol.size,
		"disk":      int64(0),
		"cpus":      cores,
		"cpu":       0,
		"uptime":    int64(0),
		"netin":     0,
		"netout":    0,
		"diskread":  0,
		"diskwrite": 0,
	}
	if g.typ == LXC {
		m["type"] = "lxc"
		m["disk"] = g.written
		m["maxswap"] = int64(512) * mib
	}
	if g.running {
		m["status"] = "running"
		m["uptime"] = int64(s.clock.now().Sub(g.startedAt).Seconds())
		m["mem"] = memMiB * mib / 3
		m["pid"] = 4000 + g.vmid
	}
	if g.isTemplate() {
		m["template"] = 1
	}
	if l := g.conf["lock"]; l != "" {
		m["lock"] = l
	}
	if t := g.conf["tags"]; t != "" {
		m["tags"] = t
	}
	return m
}
