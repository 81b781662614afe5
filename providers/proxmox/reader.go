package proxmox

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/boxsnap/boxsnap/providers"
)

// reader reads what Proxmox holds and changes nothing on it: a guest's
// config, its storage's status and type (each type read once and kept),
// its snapshots, the cluster's guests, and the tasks running on a node,
// which it waits for.
type reader struct {
	cfg  Config
	api  *api
	mu   sync.Mutex
	stor map[string]string // node/storage → type, read once per storage
}

// guestConfig is what a plan reads of a guest's config.
type guestConfig struct {
	raw      map[string]any
	Lock     string
	Parent   string
	Storage  string
	Volume   string
	Disk     int64
	Memory   int64
	Cores    int
	Template bool
}

func (b *reader) readConfig(ctx context.Context, g providers.Guest, snapshot string) (guestConfig, error) {
	path := guestPath(g) + "/config"
	if snapshot != "" {
		path += "?snapshot=" + snapshot
	}
	var raw map[string]any
	if err := b.api.get(ctx, path, &raw); err != nil {
		return guestConfig{}, fmt.Errorf("read %s's config: %w", g.Ref, err)
	}
	return parseConfig(g.Kind, raw), nil
}

func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatInt(int64(x), 10)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// parseConfig reads the root disk (LXC rootfs; QEMU's first disk that is not
// a CD-ROM), its storage and size, memory, cores, lock and parent.
func parseConfig(kind string, raw map[string]any) guestConfig {
	c := guestConfig{raw: raw, Lock: str(raw["lock"]), Parent: str(raw["parent"]), Template: str(raw["template"]) == "1"}
	keys := []string{"rootfs"}
	if kind != KindLXC {
		keys = []string{"scsi0", "virtio0", "sata0", "ide0", "scsi1", "virtio1"}
	}
	for _, k := range keys {
		v := str(raw[k])
		if v == "" || strings.Contains(v, "media=cdrom") {
			continue
		}
		vol, opts, _ := strings.Cut(v, ",")
		c.Storage, c.Volume, _ = strings.Cut(vol, ":")
		for _, o := range strings.Split(opts, ",") {
			if sz, ok := strings.CutPrefix(o, "size="); ok {
				c.Disk = parseSize(sz)
			}
		}
		break
	}
	if m, err := strconv.ParseInt(str(raw["memory"]), 10, 64); err == nil {
		c.Memory = m << 20
	} else if kind != KindLXC {
		c.Memory = 512 << 20 // QEMU's default
	}
	c.Cores, _ = strconv.Atoi(str(raw["cores"]))
	if c.Cores == 0 {
		c.Cores = 1
	}
	return c
}

// parseSize reads Proxmox's sizes: "8G", "512M", "32T", bytes.
func parseSize(s string) int64 {
	if s == "" {
		return 0
	}
	mult := int64(1)
	switch s[len(s)-1] {
	case 'K', 'k':
		mult = 1 << 10
	case 'M', 'm':
		mult = 1 << 20
	case 'G', 'g':
		mult = 1 << 30
	case 'T', 't':
		mult = 1 << 40
	}
	if mult > 1 {
		s = s[:len(s)-1]
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0
	}
	return int64(f * float64(mult))
}

// storageStatus is GET /nodes/{node}/storage/{storage}/status.
type storageStatus struct {
	Type   string `json:"type"`
	Total  int64  `json:"total"`
	Used   int64  `json:"used"`
	Avail  int64  `json:"avail"`
	Active int    `json:"active"`
}

func (b *reader) readStorage(ctx context.Context, node, storage string) (providers.Storage, error) {
	var st storageStatus
	if err := b.api.get(ctx, fmt.Sprintf("/nodes/%s/storage/%s/status", node, storage), &st); err != nil {
		return providers.Storage{}, fmt.Errorf("read storage %s on %s: %w", storage, node, err)
	}
	b.mu.Lock()
	typ, known := b.stor[node+"/"+storage]
	if !known {
		// The type is read once per storage, at its first status.
		b.stor[node+"/"+storage] = st.Type
		typ = st.Type
	}
	b.mu.Unlock()
	out := providers.Storage{Name: storage, Type: typ, FreeBytes: st.Avail}
	if st.Total > 0 {
		out.PercentFull = math.Round(float64(st.Used)/float64(st.Total)*1000) / 10
	}
	if typ == "lvmthin" {
		out.MetadataPercentFull = b.thinMetadata(ctx, node)
	}
	return out, nil
}

// thinMetadata reads the thin pool's metadata use where the token may read
// it (Sys.Audit on /); nil where it may not.
func (b *reader) thinMetadata(ctx context.Context, node string) *float64 {
	var pools []struct {
		MetadataSize int64 `json:"metadata_size"`
		MetadataUsed int64 `json:"metadata_used"`
	}
	if err := b.api.get(ctx, "/nodes/"+node+"/disks/lvmthin", &pools); err != nil {
		return nil
	}
	worst := -1.0
	for _, p := range pools {
		if p.MetadataSize > 0 {
			worst = max(worst, math.Round(float64(p.MetadataUsed)/float64(p.MetadataSize)*1000)/10)
		}
	}
	if worst < 0 {
		return nil
	}
	return &worst
}

// rollbackAny are the storage types whose rollback may go past newer
// snapshots (PS plugins' volume_rollback_is_possible).
var rollbackRule = map[string]providers.RestoreWay{
	"lvmthin": providers.WayRollback, "rbd": providers.WayRollback, "btrfs": providers.WayRollback,
	"dir": providers.WayRollback, "nfs": providers.WayRollback, "cifs": providers.WayRollback,
	"zfspool": providers.WayRollbackNewestOnly,
}

// StorageWords says what a storage type restores, for the doctor and the
// plan.
func StorageWords(typ string) string {
	switch rollbackRule[typ] {
	case providers.WayRollback:
		return "restores any snapshot"
	case providers.WayRollbackNewestOnly:
		return "restores only the newest snapshot"
	}
	switch typ {
	case "lvm":
		return "takes no snapshots of boxsnap's guests (LVM thick)"
	case "dir", "nfs", "cifs":
		return "takes snapshots of qcow2 disks only"
	}
	return "takes no snapshots"
}

// storageType is a storage's type, read once per storage.
func (b *reader) storageType(ctx context.Context, node, storage string) (string, error) {
	b.mu.Lock()
	typ, ok := b.stor[node+"/"+storage]
	b.mu.Unlock()
	if ok {
		return typ, nil
	}
	st, err := b.readStorage(ctx, node, storage)
	if err != nil {
		return "", err
	}
	return st.Type, nil
}

// settled reads the guest's config; when a lock on it belongs to a task
// still running on the guest (boxsnap's own, from before a restart: the
// step is recorded before it runs, so it runs again), it waits for that
// task first (recorded as Prior: a recorder that snoozes leaves the wait to
// the core, which runs the step again once it ended), then reads the config
// again. A lock with no task running is the host's to clear, and is
// answered as such by the caller.
func (b *reader) settled(ctx context.Context, g providers.Guest, rec providers.Recorder) (guestConfig, error) {
	conf, err := b.readConfig(ctx, g, "")
	if err != nil || conf.Lock == "" {
		return conf, err
	}
	var active []struct {
		UPID string `json:"upid"`
	}
	if err := b.api.get(ctx, fmt.Sprintf("/nodes/%s/tasks?vmid=%s&source=active", g.Host, g.Ref), &active); err != nil {
		return conf, err
	}
	if len(active) == 0 {
		return conf, nil
	}
	for _, t := range active {
		if _, err := b.api.wait(ctx, t.UPID, priorRecorder{rec}); err != nil {
			var te *TaskError
			if !errors.As(err, &te) {
				return conf, err
			}
		}
	}
	return b.readConfig(ctx, g, "")
}

// priorRecorder records a task the step waits for before it starts its own
// as Prior: a core that snoozes on it runs the step again once it ends.
type priorRecorder struct{ rec providers.Recorder }

func (p priorRecorder) TaskStarted(ctx context.Context, task providers.TaskRef) error {
	task.Prior = true
	return providers.RecordTask(ctx, p.rec, task)
}

// pveSnapshot is one entry of GET .../snapshot.
type pveSnapshot struct {
	Name        string `json:"name"`
	SnapTime    int64  `json:"snaptime"`
	Description string `json:"description"`
	Parent      string `json:"parent"`
	SnapState   string `json:"snapstate"`
	VMState     int    `json:"vmstate"`
}

func (b *reader) listSnapshots(ctx context.Context, g providers.Guest) ([]pveSnapshot, error) {
	var list []pveSnapshot
	if err := b.api.get(ctx, guestPath(g)+"/snapshot", &list); err != nil {
		return nil, fmt.Errorf("list %s's snapshots: %w", g.Ref, err)
	}
	return list, nil
}

func find(list []pveSnapshot, name string) *pveSnapshot {
	for i := range list {
		if list[i].Name == name {
			return &list[i]
		}
	}
	return nil
}

// delTask finds the UPID of the task a DELETE just started on a guest: the
// client keeps the DELETE's answer to itself.
func (b *reader) delTask(ctx context.Context, g providers.Guest, typ string) (string, error) {
	var tasks []struct {
		UPID string `json:"upid"`
	}
	path := fmt.Sprintf("/nodes/%s/tasks?vmid=%s&typefilter=%s&source=all&limit=1", g.Host, g.Ref, typ)
	if err := b.api.get(ctx, path, &tasks); err != nil {
		return "", err
	}
	if len(tasks) == 0 {
		return "", fmt.Errorf("no %s task on %s for %s", typ, g.Host, g.Ref)
	}
	return tasks[0].UPID, nil
}

// resource is one guest of GET /cluster/resources?type=vm.
type resource struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	VMID     int    `json:"vmid"`
	Node     string `json:"node"`
	Status   string `json:"status"`
	Name     string `json:"name"`
	Template int    `json:"template"`
	Lock     string `json:"lock"`
	Tags     string `json:"tags"`
}

func (b *reader) resources(ctx context.Context) ([]resource, error) {
	var list []resource
	if err := b.api.get(ctx, "/cluster/resources?type=vm", &list); err != nil {
		return nil, fmt.Errorf("list guests: %w", err)
	}
	return list, nil
}

// inRange reports whether vmid is in boxsnap's range.
func (b *reader) inRange(vmid int) bool { return vmid >= b.cfg.VMIDFirst && vmid <= b.cfg.VMIDLast }

// kindOf is a resource's box kind.
func kindOf(r resource) string {
	if r.Type == "lxc" {
		return KindLXC
	}
	return KindQEMU
}

// waitClones waits for every clone task still running on g's node.
func (b *reader) waitClones(ctx context.Context, g providers.Guest) error {
	typ := "qmclone"
	if g.Kind == KindLXC {
		typ = "vzclone"
	}
	var active []struct {
		UPID string `json:"upid"`
	}
	if err := b.api.get(ctx, fmt.Sprintf("/nodes/%s/tasks?typefilter=%s&source=active", g.Host, typ), &active); err != nil {
		return err
	}
	for _, t := range active {
		if _, err := b.api.wait(ctx, t.UPID, nil); err != nil {
			var te *TaskError
			if !errors.As(err, &te) {
				return err
			}
		}
	}
	return nil
}
