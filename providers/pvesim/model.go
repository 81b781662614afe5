package pvesim

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// GuestType is a guest's kind, as it appears in API paths.
type GuestType string

// The two guest types of Proxmox VE.
const (
	LXC  GuestType = "lxc"
	QEMU GuestType = "qemu"
)

// Storage types the simulator knows (PS Storage/*Plugin.pm type()).
const (
	StorageLVMThin = "lvmthin"
	StorageZFSPool = "zfspool"
	StorageRBD     = "rbd"
	StorageBTRFS   = "btrfs"
	StorageDir     = "dir"
	StorageNFS     = "nfs"
	StorageCIFS    = "cifs"
	StorageLVM     = "lvm"
	StorageISCSI   = "iscsi"
	StoragePBS     = "pbs"
)

// Lock names (GC AbstractConfig.pm).
const (
	LockSnapshot       = "snapshot"
	LockSnapshotDelete = "snapshot-delete"
	LockRollback       = "rollback"
	LockBackup         = "backup"
	LockClone          = "clone"
	LockCreate         = "create"
	LockDisk           = "disk"
)

const (
	rootUser = "root@pam"
	// gib is one GiB in bytes.
	gib = int64(1) << 30
	mib = int64(1) << 20
	// thinMetadataSize is the metadata LV of a simulated LVM-thin pool, and
	// thinMetadataPerSnapshot what each snapshot adds to its use: enough to
	// make metadataPercentFull move.
	thinMetadataSize        = gib
	thinMetadataPerSnapshot = 4 * mib
)

type node struct {
	name    string
	cut     bool // unreachable from the API node (control API): 595
	dropped bool // its connections drop without an answer (control API)
	pstart  int  // "process start" counter of the node, in clock ticks
	bootAt  time.Time
	tasks   []*task
	taskSeq int
}

type storage struct {
	id      string
	typ     string
	node    string
	total   int64
	content string
	shared  bool
	path    string
	vgname  string
	thin    string
	pool    string
	fill    int64 // bytes used by things outside the simulated guests
	active  bool
}

type snapshot struct {
	name        string
	description string
	parent      string
	snaptime    int64
	snapstate   string
	vmstate     bool
	vmstateVol  string // the RAM state's volume, QEMU only
	conf        map[string]string
	written     int64 // the disk's used bytes when it was taken
	unique      int64 // bytes only this snapshot still holds (thin storage)
	seq         int   // order of taking, for "most recent" (ZFS)
}

type guest struct {
	vmid      int
	typ       GuestType
	node      string
	pool      string
	running   bool
	paused    bool
	startedAt time.Time
	conf      map[string]string
	snaps     map[string]*snapshot
	written   int64 // bytes the guest has written on its root disk
	snapSeq   int
}

// principal is a user or an API token with its grants.
type principal struct {
	id       string // user@realm or user@realm!tokenid
	password string
	secret   string
	root     bool
	grants   []Grant
}

type ticket struct {
	user    string
	expires time.Time
}

// Grant gives privileges on a path, as a Proxmox ACL entry does: Privs may
// hold privilege names ("VM.Snapshot") or role names ("PVEVMAdmin").
// Propagate passes them to the paths below.
type Grant struct {
	Path      string
	Privs     []string
	Propagate bool
}

// errorf makes a plain error of the simulator's Go API.
func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// ErrNotFound is returned by the Go API for an unknown node, storage, guest
// or snapshot.
var ErrNotFound = errors.New("pvesim: not found")

func (g *guest) kind() string {
	if g.typ == LXC {
		return "CT"
	}
	return "VM"
}

// diskKey is the config key of the guest's root disk.
func (g *guest) diskKey() string {
	if g.typ == LXC {
		return "rootfs"
	}
	return "scsi0"
}

func (g *guest) isTemplate() bool { return g.conf["template"] == "1" }

func (g *guest) name() string {
	if g.typ == LXC {
		if h := g.conf["hostname"]; h != "" {
			return h
		}
		// PC LXC.pm vmstatus: "CT$vmid".
		return "CT" + strconv.Itoa(g.vmid)
	}
	if n := g.conf["name"]; n != "" {
		return n
	}
	// QS QemuServer.pm vmstatus: "VM $vmid".
	return "VM " + strconv.Itoa(g.vmid)
}

// volume is the parsed root disk: "local-lvm:vm-101-disk-0,size=8G".
type volume struct {
	storage string
	volname string
	size    int64
}

func parseVolume(v string) (volume, bool) {
	parts := strings.Split(v, ",")
	sv := strings.SplitN(parts[0], ":", 2)
	if len(sv) != 2 {
		return volume{}, false
	}
	vol := volume{storage: sv[0], volname: sv[1]}
	for _, p := range parts[1:] {
		if after, ok := strings.CutPrefix(p, "size="); ok {
			vol.size = parseSize(after)
		}
	}
	return vol, true
}

func (g *guest) rootVolume() (volume, bool) { return parseVolume(g.conf[g.diskKey()]) }

// parseSize reads Proxmox's disk sizes ("8G", "512M", "32G").
func parseSize(s string) int64 {
	if s == "" {
		return 0
	}
	mult := int64(1)
	switch s[len(s)-1] {
	case 'K':
		mult = 1 << 10
	case 'M':
		mult = mib
	case 'G':
		mult = gib
	case 'T':
		mult = gib << 10
	}
	if mult != 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0
	}
	return int64(n * float64(mult))
}

// formatSize writes sizes as Proxmox does in disk strings.
func formatSize(b int64) string {
	switch {
	case b%gib == 0:
		return strconv.FormatInt(b/gib, 10) + "G"
	case b%mib == 0:
		return strconv.FormatInt(b/mib, 10) + "M"
	}
	return strconv.FormatInt(b/1024, 10) + "K"
}

// volumeFormat is a volume's format, from its name (PS Plugin.pm
// parse_volname).
func volumeFormat(volname string) string {
	switch {
	case strings.HasSuffix(volname, ".qcow2"):
		return "qcow2"
	case strings.HasSuffix(volname, ".subvol") || strings.Contains(volname, "subvol-"):
		return "subvol"
	}
	return "raw"
}

// snapshotFeature reports whether a volume of this storage type and format
// can be snapshotted (PS *Plugin.pm volume_has_feature 'snapshot').
func snapshotFeature(storageType, format string) bool {
	switch storageType {
	case StorageZFSPool, StorageLVMThin, StorageRBD, StorageBTRFS:
		return true
	case StorageDir, StorageNFS, StorageCIFS:
		return format == "qcow2"
	}
	// lvm (thick): only qcow2 volume chains, which the simulator does not
	// model; iscsi, iscsidirect, pbs: none.
	return false
}

// thinStorage reports whether a storage allocates only what is written.
func thinStorage(typ string) bool { return typ != StorageLVM && typ != StorageISCSI }

// digest is the SHA-1 of the guest's config file as the simulator would
// write it (GC AbstractConfig.pm load_config: digest of the raw file).
func (g *guest) digest() string {
	h := sha1.New()
	writeSection(h, g.conf)
	names := make([]string, 0, len(g.snaps))
	for n := range g.snaps {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		sn := g.snaps[n]
		fmt.Fprintf(h, "[%s]\n", n)
		writeSection(h, sn.sectionConf())
	}
	return hex.EncodeToString(h.Sum(nil))
}

func writeSection(h interface{ Write([]byte) (int, error) }, conf map[string]string) {
	keys := make([]string, 0, len(conf))
	for k := range conf {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(h, "%s: %s\n", k, conf[k])
	}
}

// sectionConf is a snapshot section as the config file holds it.
func (sn *snapshot) sectionConf() map[string]string {
	out := make(map[string]string, len(sn.conf)+5)
	for k, v := range sn.conf {
		out[k] = v
	}
	delete(out, "lock")
	out["snaptime"] = strconv.FormatInt(sn.snaptime, 10)
	if sn.description != "" {
		out["description"] = sn.description
	} else {
		delete(out, "description")
	}
	if sn.parent != "" {
		out["parent"] = sn.parent
	} else {
		delete(out, "parent")
	}
	if sn.snapstate != "" {
		out["snapstate"] = sn.snapstate
	}
	if sn.vmstate {
		// QS QemuConfig.pm __snapshot_save_vmstate: the section names the
		// state volume.
		out["vmstate"] = sn.vmstateVol
	}
	return out
}

func copyConf(c map[string]string) map[string]string {
	out := make(map[string]string, len(c))
	for k, v := range c {
		out[k] = v
	}
	return out
}

// isIntKey reports the config keys Proxmox answers as JSON numbers (their
// schema type is integer or boolean; CO JSONSchema.pm). QEMU's memory is a
// string since qemu-server 8 (a property string), LXC's an integer.
func isIntKey(typ GuestType, key string) bool {
	switch key {
	case "cores", "onboot", "template", "snaptime", "protection":
		return true
	case "memory", "swap", "unprivileged", "cpuunits":
		return typ == LXC
	case "sockets":
		return typ == QEMU
	}
	return false
}

func (g *guest) confJSON(conf map[string]string) map[string]any {
	out := make(map[string]any, len(conf)+1)
	for k, v := range conf {
		if isIntKey(g.typ, k) {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				out[k] = n
				continue
			}
		}
		out[k] = v
	}
	return out
}

// newestSnapshot is the snapshot taken last, which is the only one ZFS may
// roll back to (its order of creation, not snaptime, which has seconds only).
func (g *guest) newestSnapshot() *snapshot {
	var best *snapshot
	for _, sn := range g.snaps {
		if best == nil || sn.seq > best.seq {
			best = sn
		}
	}
	return best
}

func itoa(i int) string { return strconv.Itoa(i) }

// apiError is an error answer: its status, message (Proxmox keeps a
// trailing newline in the body), and per-parameter errors for a 400.
type apiError struct {
	status  int
	message string
	errors  map[string]string
}

func (e *apiError) Error() string { return e.message }
