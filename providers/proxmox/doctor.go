package proxmox

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/boxsnap/boxsnap/providers"
)

// Check is one result of the doctor's checks of this backend. It never holds
// the token's secret.
type Check struct {
	Name   string
	OK     bool
	Detail string
	Fix    string
}

// neededPrivs are the rights boxsnap's token needs, and where: the plan's
// reads of storage, the node's task list for restores made outside, and the
// snapshots, rollbacks and clones of the operations themselves.
var neededPrivs = []struct {
	Priv  string
	Paths []string
	Why   string
}{
	{"VM.Audit", []string{"/vms", "/"}, "to read guests, their config and snapshots"},
	{"VM.Snapshot", []string{"/vms", "/"}, "to take and delete snapshots"},
	{"VM.Snapshot.Rollback", []string{"/vms", "/"}, "to restore"},
	{"Datastore.Audit", []string{"/storage", "/"}, "to read each storage's fullness"},
	{"Sys.Audit", []string{"/nodes", "/"}, "to read the nodes' task lists, for restores made outside boxsnap"},
}

// Doctor checks the token's rights (GET /access/permissions), each node's
// storages and what each restores, and names every guest a host left locked
// with the command that clears it.
func (b *Backend) Doctor(ctx context.Context) []Check {
	name := "backend " + b.cfg.ID
	var perms map[string]map[string]int
	if err := b.api.get(ctx, "/access/permissions", &perms); err != nil {
		fix := "check BOXSNAP_PROXMOX_URL and that the host answers"
		var ae *apiError
		if errors.As(err, &ae) && ae.Status == 401 {
			fix = "the API token was refused: check BOXSNAP_PROXMOX_TOKEN_ID and its secret (not shown)"
		}
		return []Check{{Name: name, Detail: fmt.Sprintf("%s does not answer as a Proxmox VE: %v", b.cfg.URL, err), Fix: fix}}
	}
	var out []Check
	var missing []string
	for _, n := range neededPrivs {
		paths := n.Paths
		if b.cfg.Pool != "" && strings.HasPrefix(n.Priv, "VM.") {
			paths = append([]string{"/pool/" + b.cfg.Pool}, paths...)
		}
		has := false
		for _, p := range paths {
			if perms[p][n.Priv] != 0 || hasPriv(perms[p], n.Priv) {
				has = true
			}
		}
		if !has {
			missing = append(missing, fmt.Sprintf("%s on %s (%s)", n.Priv, paths[0], n.Why))
		}
	}
	if len(missing) > 0 {
		out = append(out, Check{Name: name + " token", Detail: "the token " + b.cfg.TokenID + " lacks " + strings.Join(missing, "; "),
			Fix: "grant these privileges to the token (and its user, for a privilege-separated token)"})
	} else {
		out = append(out, Check{Name: name + " token", OK: true, Detail: "the token " + b.cfg.TokenID + " has VM.Audit, VM.Snapshot, VM.Snapshot.Rollback, Datastore.Audit and Sys.Audit"})
	}

	var nodes []struct {
		Node   string `json:"node"`
		Status string `json:"status"`
	}
	if err := b.api.get(ctx, "/nodes", &nodes); err != nil {
		return append(out, Check{Name: name + " nodes", Detail: err.Error(), Fix: "check that the host answers"})
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Node < nodes[j].Node })
	for _, n := range nodes {
		if n.Status != "online" {
			out = append(out, Check{Name: name + " " + n.Node, Detail: n.Node + " is " + n.Status + ": its snapshots are unavailable", Fix: "bring " + n.Node + " back into the cluster"})
			continue
		}
		var stors []struct {
			Storage string `json:"storage"`
			Type    string `json:"type"`
			Content string `json:"content"`
		}
		if err := b.api.get(ctx, "/nodes/"+n.Node+"/storage", &stors); err != nil {
			out = append(out, Check{Name: name + " " + n.Node, Detail: err.Error(), Fix: "grant Datastore.Audit on /storage"})
			continue
		}
		for _, s := range stors {
			if !strings.Contains(s.Content, "images") && !strings.Contains(s.Content, "rootdir") {
				continue
			}
			words := fmt.Sprintf("%s's storage %s (%s) %s", n.Node, s.Storage, s.Type, StorageWords(s.Type))
			c := Check{Name: name + " " + n.Node, OK: true, Detail: words}
			switch {
			case rollbackRule[s.Type] == providers.WayRollbackNewestOnly && !b.cfg.ZFSOrderForLiveChecksOnly:
				c.Detail += "; ZFS restores are off until they are checked live (forks and takes work)"
			case rollbackRule[s.Type] == "" && s.Type != "dir":
				c.OK = false
				c.Fix = "put boxsnap's guests on LVM-thin, ZFS, Ceph RBD, BTRFS or qcow2 files"
			case s.Type == "dir":
				c.Detail += " (raw files and containers there take none)"
			}
			out = append(out, c)
		}
	}
	guests, err := b.resources(ctx)
	if err != nil {
		return append(out, Check{Name: name + " guests", Detail: err.Error(), Fix: "grant VM.Audit"})
	}
	for _, r := range guests {
		if r.Lock == "" {
			continue
		}
		kind := KindQEMU
		if r.Type == "lxc" {
			kind = KindLXC
		}
		g := providers.Guest{Kind: kind, Host: r.Node, Ref: strconv.Itoa(r.VMID)}
		out = append(out, Check{Name: name + " locks", Detail: fmt.Sprintf("guest %d (%s) on %s is locked (%s): boxsnap refuses its snapshots and restores", r.VMID, r.Name, r.Node, r.Lock),
			Fix: unlockWords(g)})
	}
	return out
}

func hasPriv(m map[string]int, priv string) bool {
	_, ok := m[priv]
	return ok
}
