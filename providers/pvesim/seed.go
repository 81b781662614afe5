package pvesim

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// StorageSpec describes a storage on one node.
type StorageSpec struct {
	// ID is the storage's name ("local-lvm", "local-zfs").
	ID string
	// Type is its plugin type (StorageLVMThin, StorageZFSPool, ...).
	Type string
	// Total is its size in bytes.
	Total int64
	// Shared marks a storage every node sees (rbd, nfs).
	Shared bool
	// Content defaults to "images,rootdir".
	Content string
}

// GuestSpec describes a guest to seed.
type GuestSpec struct {
	VMID    int
	Type    GuestType
	Node    string
	Name    string
	Storage string
	// DiskSize in bytes; zero means 8 GiB.
	DiskSize int64
	// Format of a QEMU disk on a directory storage: "qcow2" (default) or
	// "raw". LXC volumes on directories are raw, as Proxmox makes them.
	Format string
	// Memory in MiB; zero means 2048.
	Memory int
	// Cores; zero means 2.
	Cores   int
	OnBoot  bool
	Running bool
	// OSType is QEMU's ostype ("l26", "win11") or LXC's ("debian").
	OSType      string
	Pool        string
	Tags        string
	Description string
	// Written is how many bytes the guest already uses on its disk.
	Written int64
}

// AddNode adds a cluster node, online.
func (s *cluster) AddNode(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if name == "" || strings.ContainsAny(name, "/: ") {
		return fmt.Errorf("pvesim: add node %q: invalid name", name)
	}
	if s.nodes[name] != nil {
		return fmt.Errorf("pvesim: add node %q: already exists", name)
	}
	now := s.clock.now()
	s.nodes[name] = &node{name: name, pstart: 1000 + 37*len(s.nodes), bootAt: now.Add(-bootedAgo)}
	return nil
}

// bootedAgo is how long seeded nodes have been up when the simulator starts.
const bootedAgo = 72 * time.Hour

// AddStorage adds a storage to a node.
func (s *cluster) AddStorage(nodeName string, spec StorageSpec) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nodes[nodeName] == nil {
		return fmt.Errorf("pvesim: add storage %q: node %q: %w", spec.ID, nodeName, ErrNotFound)
	}
	if spec.ID == "" || spec.Type == "" || spec.Total <= 0 {
		return fmt.Errorf("pvesim: add storage %q: ID, Type and Total are required", spec.ID)
	}
	key := nodeName + "/" + spec.ID
	if s.storages[key] != nil {
		return fmt.Errorf("pvesim: add storage %q on %q: already exists", spec.ID, nodeName)
	}
	st := &storage{id: spec.ID, typ: spec.Type, node: nodeName, total: spec.Total, shared: spec.Shared, content: spec.Content, active: true}
	if st.content == "" {
		st.content = "images,rootdir"
	}
	switch spec.Type {
	case StorageLVMThin:
		st.vgname, st.thin = "pve", "data"
	case StorageZFSPool:
		st.pool = "rpool/data"
	case StorageDir, StorageBTRFS:
		st.path = "/var/lib/vz"
	case StorageLVM:
		st.vgname = "pve"
	case StorageRBD:
		st.pool = "rbd"
	}
	s.storages[key] = st
	return nil
}

// AddGuest adds a guest (stopped unless spec.Running) with a root disk on
// spec.Storage of its node.
func (s *cluster) AddGuest(spec GuestSpec) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.addGuestLocked(spec)
	return err
}

func (s *cluster) addGuestLocked(spec GuestSpec) (*guest, error) {
	if spec.Type != LXC && spec.Type != QEMU {
		return nil, fmt.Errorf("pvesim: add guest %d: type must be lxc or qemu", spec.VMID)
	}
	if spec.VMID < 100 || spec.VMID > 999999999 {
		return nil, fmt.Errorf("pvesim: add guest %d: vmid out of range 100..999999999", spec.VMID)
	}
	if s.guests[spec.VMID] != nil {
		return nil, fmt.Errorf("pvesim: add guest %d: already exists", spec.VMID)
	}
	if s.nodes[spec.Node] == nil {
		return nil, fmt.Errorf("pvesim: add guest %d: node %q: %w", spec.VMID, spec.Node, ErrNotFound)
	}
	st := s.storages[spec.Node+"/"+spec.Storage]
	if st == nil {
		return nil, fmt.Errorf("pvesim: add guest %d: storage %q on %q: %w", spec.VMID, spec.Storage, spec.Node, ErrNotFound)
	}
	size := spec.DiskSize
	if size == 0 {
		size = 8 * gib
	}
	mem := spec.Memory
	if mem == 0 {
		mem = 2048
	}
	cores := spec.Cores
	if cores == 0 {
		cores = 2
	}
	g := &guest{vmid: spec.VMID, typ: spec.Type, node: spec.Node, pool: spec.Pool, conf: map[string]string{}, snaps: map[string]*snapshot{}}
	g.conf["cores"] = strconv.Itoa(cores)
	g.conf["memory"] = strconv.Itoa(mem)
	g.conf[g.diskKey()] = spec.Storage + ":" + volumeName(st.typ, spec.Type, spec.VMID, spec.Format, false) + ",size=" + formatSize(size)
	g.conf["net0"] = s.netString(g, "")
	if spec.OnBoot {
		g.conf["onboot"] = "1"
	}
	if spec.Description != "" {
		g.conf["description"] = spec.Description
	}
	if spec.Tags != "" {
		g.conf["tags"] = normTags(spec.Tags)
	}
	if spec.Type == LXC {
		g.conf["hostname"] = spec.Name
		g.conf["arch"] = "amd64"
		g.conf["ostype"] = firstNonEmpty(spec.OSType, "debian")
		g.conf["swap"] = "512"
		g.conf["unprivileged"] = "1"
	} else {
		g.conf["name"] = spec.Name
		g.conf["ostype"] = firstNonEmpty(spec.OSType, "l26")
		g.conf["smbios1"] = "uuid=" + s.newUUID()
		g.conf["scsihw"] = "virtio-scsi-single"
		g.conf["boot"] = "order=scsi0;net0"
		g.conf["vmgenid"] = s.newUUID()
	}
	if spec.Name == "" {
		delete(g.conf, "hostname")
		delete(g.conf, "name")
	}
	g.written = min(spec.Written, size)
	if spec.Pool != "" {
		s.pools[spec.Pool] = true
	}
	if spec.Running {
		g.running = true
		g.startedAt = s.clock.now()
	}
	s.guests[g.vmid] = g
	return g, nil
}

// volumeName is how Proxmox names a guest's first disk on a storage type
// (PS *Plugin.pm alloc_image / find_free_diskname): subvolumes for LXC on
// ZFS and BTRFS, files under <vmid>/ on directories, base- for templates.
func volumeName(storageType string, typ GuestType, vmid int, format string, base bool) string {
	prefix := "vm-"
	if base {
		prefix = "base-"
	}
	id := strconv.Itoa(vmid)
	switch storageType {
	case StorageZFSPool:
		if typ == LXC {
			if base {
				return "basevol-" + id + "-disk-0"
			}
			return "subvol-" + id + "-disk-0"
		}
	case StorageDir, StorageNFS, StorageCIFS, StorageBTRFS:
		if typ == LXC {
			if storageType == StorageBTRFS {
				return id + "/subvol-" + id + "-disk-0.subvol"
			}
			return id + "/" + prefix + id + "-disk-0.raw"
		}
		if format == "" {
			format = "qcow2"
		}
		return id + "/" + prefix + id + "-disk-0." + format
	}
	return prefix + id + "-disk-0"
}

// netString makes a net0 value with a fresh MAC in Proxmox's BC:24:11
// prefix (CO Tools.pm random_ether_addr with the Proxmox OUI).
func (s *cluster) netString(g *guest, old string) string {
	mac := fmt.Sprintf("BC:24:11:%02X:%02X:%02X", s.rng.IntN(256), s.rng.IntN(256), s.rng.IntN(256))
	if old != "" {
		parts := strings.Split(old, ",")
		for i, p := range parts {
			k, _, _ := strings.Cut(p, "=")
			if k == "hwaddr" || k == "virtio" || k == "e1000" {
				parts[i] = k + "=" + mac
			}
		}
		return strings.Join(parts, ",")
	}
	if g.typ == LXC {
		return "name=eth0,bridge=vmbr0,hwaddr=" + mac + ",ip=dhcp,type=veth"
	}
	return "virtio=" + mac + ",bridge=vmbr0"
}

func (s *cluster) newUUID() string {
	b := make([]byte, 16)
	for i := range b {
		b[i] = byte(s.rng.IntN(256))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// normTags sorts and lowercases tags, ';'-separated, as Proxmox stores them
// (PM/GC: tags are normalised on write).
func normTags(t string) string {
	f := strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return r == ';' || r == ',' || r == ' ' })
	sort.Strings(f)
	f = compactStrings(f)
	return strings.Join(f, ";")
}

func compactStrings(in []string) []string {
	var out []string
	for i, v := range in {
		if i == 0 || v != in[i-1] {
			out = append(out, v)
		}
	}
	return out
}

func firstNonEmpty(v ...string) string {
	for _, x := range v {
		if x != "" {
			return x
		}
	}
	return ""
}

// AddPool adds a resource pool (a guest seeded with a pool adds it too).
func (s *cluster) AddPool(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if name == "" || strings.ContainsAny(name, "/ ") {
		return fmt.Errorf("pvesim: add pool %q: invalid name", name)
	}
	s.pools[name] = true
	return nil
}

// AddUser adds a user that can sign in with a password (POST
// /access/ticket), with its grants.
func (s *cluster) AddUser(userid, password string, grants ...Grant) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !strings.Contains(userid, "@") || strings.Contains(userid, "!") {
		return fmt.Errorf("pvesim: add user: %q is not user@realm", userid)
	}
	if userid == rootUser {
		s.users[rootUser].password = password
		return nil
	}
	s.users[userid] = &principal{id: userid, password: password, grants: append([]Grant(nil), grants...)}
	return nil
}

// AddToken adds an API token "user@realm!tokenid" with its secret and its
// grants. The token is privilege-separated: when its user was added with
// grants, its rights are the intersection of both.
func (s *cluster) AddToken(tokenID, secret string, grants ...Grant) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	user, name, ok := strings.Cut(tokenID, "!")
	if !ok || !strings.Contains(user, "@") || name == "" || secret == "" {
		return fmt.Errorf("pvesim: add token: %q is not user@realm!tokenid with a secret", tokenID)
	}
	s.tokens[tokenID] = &principal{id: tokenID, secret: secret, grants: append([]Grant(nil), grants...)}
	return nil
}

// storageUsed is what a storage holds: what others put there (fill), plus
// each volume on it: on thin storage the bytes written and what snapshots
// alone still hold; on thick storage the whole disk.
func (s *cluster) storageUsed(st *storage) int64 {
	used := st.fill
	for _, g := range s.guests {
		if g.node != st.node && !st.shared {
			continue
		}
		vol, ok := g.rootVolume()
		if !ok || vol.storage != st.id {
			continue
		}
		if !thinStorage(st.typ) {
			used += vol.size
			continue
		}
		used += g.written
		for _, sn := range g.snaps {
			used += sn.unique
		}
	}
	return used
}

func (s *cluster) thinMetadataUsed(st *storage) int64 {
	n := int64(0)
	for _, g := range s.guests {
		if vol, ok := g.rootVolume(); ok && vol.storage == st.id && g.node == st.node {
			n += int64(len(g.snaps))
		}
	}
	// About 0.5% of the data, plus a slice per snapshot.
	return min(s.storageUsed(st)/200+n*thinMetadataPerSnapshot, thinMetadataSize)
}

func (s *cluster) sortedGuests() []*guest {
	out := make([]*guest, 0, len(s.guests))
	for _, g := range s.guests {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].vmid < out[j].vmid })
	return out
}
