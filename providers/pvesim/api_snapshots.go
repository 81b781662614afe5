package pvesim

import (
	"sort"
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
