package proxmox

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// nextVMID is the lowest free VMID of boxsnap's range.
func (b *Backend) nextVMID(ctx context.Context) (int, error) {
	guests, err := b.resources(ctx)
	if err != nil {
		return 0, err
	}
	used := map[int]bool{}
	for _, r := range guests {
		used[r.VMID] = true
	}
	for id := b.cfg.VMIDFirst; id <= b.cfg.VMIDLast; id++ {
		if !used[id] {
			return id, nil
		}
	}
	return 0, &providers.RefusedError{Why: fmt.Sprintf("boxsnap's VMIDs %d to %d are all used on %s.", b.cfg.VMIDFirst, b.cfg.VMIDLast, b.cfg.ID)}
}

// clone clones src (from snapshot snapname when set) into a new VMID of
// boxsnap's range and waits for it.
func (b *Backend) clone(ctx context.Context, src providers.Guest, snapname, name, description string, full bool, rec providers.Recorder) (providers.Guest, error) {
	id, err := b.nextVMID(ctx)
	if err != nil {
		return providers.Guest{}, err
	}
	params := map[string]any{"newid": id}
	if full {
		params["full"] = 1
	}
	if snapname != "" {
		params["snapname"] = snapname
	}
	if description != "" {
		params["description"] = description
	}
	if b.cfg.Pool != "" {
		params["pool"] = b.cfg.Pool
	}
	if name != "" {
		if src.Kind == KindLXC {
			params["hostname"] = name
		} else {
			params["name"] = name
		}
	}
	upid, err := b.api.post(ctx, guestPath(src)+"/clone", params)
	if err != nil {
		return providers.Guest{}, fmt.Errorf("clone %s: %w", src.Ref, err)
	}
	if _, err := b.api.wait(ctx, upid, rec); err != nil {
		return providers.Guest{}, fmt.Errorf("clone %s into %d: %w", src.Ref, id, err)
	}
	return providers.Guest{Backend: b.cfg.ID, Kind: src.Kind, Host: src.Host, Ref: strconv.Itoa(id), Generation: 1}, nil
}

// ForkSnapshot makes a new guest for box from the snapshot: a full clone of
// it, labelled as the box's (section 9). The core starts it.
func (b *Backend) ForkSnapshot(ctx context.Context, ref providers.SnapshotRef, box providers.BoxIdentity, rec providers.Recorder) (providers.Guest, error) {
	if ref.Guest.Kind == KindQEMUWindows {
		return providers.Guest{}, &providers.RefusedError{Why: "Windows boxes do not fork until a unit builds Windows' identity reset."}
	}
	return b.clone(ctx, ref.Guest, ref.Ref, box.Name, guestLabel(box), true, rec)
}

func guestLabel(box providers.BoxIdentity) string {
	return fmt.Sprintf("boxsnap install %s box %s", box.Install, box.ID)
}

var macRE = regexp.MustCompile(`(?i)([0-9a-f]{2}:){5}[0-9a-f]{2}`)

// netKeys are the guest's network interfaces in its config.
func netKeys(raw map[string]any) []string {
	var keys []string
	for k := range raw {
		if strings.HasPrefix(k, "net") {
			if _, err := strconv.Atoi(k[3:]); err == nil {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

func withLink(v string, down bool) string {
	parts := strings.Split(v, ",")
	out := parts[:0]
	for _, p := range parts {
		if !strings.HasPrefix(p, "link_down=") {
			out = append(out, p)
		}
	}
	if down {
		out = append(out, "link_down=1")
	}
	return strings.Join(out, ",")
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// HoldCopy runs one step of a held copy (section 2): a full clone of the
// snapshot or of the stopped guest, then disarm (onboot 0, links down, a new
// SMBIOS UUID on QEMU, in one config write), then make it a template.
func (b *Backend) HoldCopy(ctx context.Context, source providers.SnapshotRef, label providers.Label, step providers.HeldCopyStep, rec providers.Recorder) (providers.HeldCopyProgress, error) {
	p := providers.HeldCopyProgress{Step: step}
	switch step {
	case providers.HeldCopyClone:
		desc := Describe(label)
		g, err := b.clone(ctx, source.Guest, source.Ref, "", desc, true, rec)
		if err != nil {
			return p, err
		}
		p.Copy = &providers.SnapshotRef{ID: source.ID, Ref: g.Ref, Guest: g, Storage: source.Storage, Where: "held-copy"}
	case providers.HeldCopyDisarm:
		g := source.Guest
		conf, err := b.readConfig(ctx, g, "")
		if err != nil {
			return p, err
		}
		params := map[string]any{"onboot": 0, "digest": str(conf.raw["digest"])}
		for _, k := range netKeys(conf.raw) {
			params[k] = withLink(str(conf.raw[k]), true)
		}
		if g.Kind != KindLXC {
			params["smbios1"] = "uuid=" + newUUID()
		}
		if _, err := b.api.put(ctx, guestPath(g)+"/config", params); err != nil {
			return p, fmt.Errorf("disarm %s: %w", g.Ref, err)
		}
		p.Copy = &source
	case providers.HeldCopyTemplate:
		g := source.Guest
		upid, err := b.api.post(ctx, guestPath(g)+"/template", nil)
		if err != nil {
			return p, fmt.Errorf("make %s a template: %w", g.Ref, err)
		}
		if upid != "" {
			if _, err := b.api.wait(ctx, upid, rec); err != nil {
				return p, fmt.Errorf("make %s a template: %w", g.Ref, err)
			}
		}
		// LXC answers null though a task runs: read the config until it is
		// a template.
		deadline := time.Now().Add(b.cfg.TaskTimeout)
		for {
			conf, err := b.readConfig(ctx, g, "")
			if err != nil {
				return p, err
			}
			if conf.Template {
				break
			}
			if time.Now().After(deadline) {
				return p, fmt.Errorf("%s is not a template after %s", g.Ref, b.cfg.TaskTimeout)
			}
			select {
			case <-ctx.Done():
				return p, ctx.Err()
			case <-time.After(b.cfg.PollEvery):
			}
		}
		p.Copy = &source
	default:
		return p, fmt.Errorf("held copy step %q: %w", step, providers.ErrUnsupported)
	}
	p.Done = true
	return p, nil
}

// AdoptCopy makes a new guest for the same box from a held copy: a full
// clone, re-armed with the box's MAC addresses and SMBIOS, onboot set and
// links up, before its first start (section 2, "Cloning a held copy re-arms
// the clone").
func (b *Backend) AdoptCopy(ctx context.Context, cp providers.SnapshotRef, box providers.BoxIdentity, id providers.GuestIdentity, rec providers.Recorder) (providers.Guest, error) {
	g, err := b.clone(ctx, cp.Guest, "", box.Name, guestLabel(box), true, rec)
	if err != nil {
		return g, err
	}
	conf, err := b.readConfig(ctx, g, "")
	if err != nil {
		return g, err
	}
	params := map[string]any{"onboot": 1, "digest": str(conf.raw["digest"])}
	for i, k := range netKeys(conf.raw) {
		v := withLink(str(conf.raw[k]), false)
		if i < len(id.MACs) {
			v = macRE.ReplaceAllString(v, id.MACs[i])
		}
		params[k] = v
	}
	if g.Kind != KindLXC && id.SMBIOS != "" {
		params["smbios1"] = id.SMBIOS
	}
	if _, err := b.api.put(ctx, guestPath(g)+"/config", params); err != nil {
		return g, fmt.Errorf("re-arm %s: %w", g.Ref, err)
	}
	return g, nil
}

// Acquire adopts an existing guest by its VMID, or clones a template VMID
// into a new VMID of boxsnap's range and starts it.
func (b *Backend) Acquire(ctx context.Context, spec providers.BoxSpec) (providers.Guest, error) {
	kind := spec.Box.Kind
	if b.Snapshotting(kind) == nil {
		return providers.Guest{}, &providers.RefusedError{Why: fmt.Sprintf("Proxmox runs boxes of kind lxc, qemu and qemu-windows, not %s.", kind)}
	}
	ref := spec.Adopt
	if ref == "" {
		ref = spec.Template
	}
	if ref == "" {
		return providers.Guest{}, &providers.RefusedError{Why: "A Proxmox box is a clone of a template VMID, or an existing guest adopted by its VMID."}
	}
	guests, err := b.resources(ctx)
	if err != nil {
		return providers.Guest{}, err
	}
	var found *resource
	for i := range guests {
		if strconv.Itoa(guests[i].VMID) == ref {
			found = &guests[i]
		}
	}
	if found == nil {
		return providers.Guest{}, fmt.Errorf("guest %s: %w", ref, providers.ErrNotFound)
	}
	if (found.Type == "lxc") != (kind == KindLXC) {
		return providers.Guest{}, &providers.RefusedError{Why: fmt.Sprintf("Guest %s is %s, not a box of kind %s.", ref, found.Type, kind)}
	}
	g := providers.Guest{Backend: b.cfg.ID, Kind: kind, Host: found.Node, Ref: ref, Generation: 1}
	if spec.Adopt != "" {
		return g, nil
	}
	if found.Template != 1 {
		return providers.Guest{}, &providers.RefusedError{Why: fmt.Sprintf("Guest %s is not a template: adopt it instead.", ref)}
	}
	ng, err := b.clone(ctx, g, "", spec.Box.Name, guestLabel(spec.Box), false, nil)
	if err != nil {
		return ng, err
	}
	ng.Kind = kind
	if err := b.Start(ctx, ng); err != nil {
		return ng, err
	}
	return ng, nil
}

// destroy stops and deletes a guest and waits for it.
func (b *Backend) destroy(ctx context.Context, g providers.Guest) error {
	if err := b.Stop(ctx, g); err != nil && !errors.Is(err, providers.ErrNotFound) {
		return err
	}
	if err := b.api.del(ctx, guestPath(g)+"?purge=1"); err != nil {
		if errors.Is(err, providers.ErrNotFound) {
			return nil
		}
		if le := lockError(g, err.Error()); le != nil {
			return le
		}
		return fmt.Errorf("delete %s: %w", g.Ref, err)
	}
	typ := "qmdestroy"
	if g.Kind == KindLXC {
		typ = "vzdestroy"
	}
	upid, err := b.delTask(ctx, g, typ)
	if err != nil {
		return err
	}
	_, err = b.api.wait(ctx, upid, nil)
	return err
}

// Release deletes the guest. A guest already gone is released.
func (b *Backend) Release(ctx context.Context, g providers.Guest) error {
	err := b.destroy(ctx, g)
	if errors.Is(err, providers.ErrNotFound) {
		return nil
	}
	return err
}

// Status reads whether the guest exists and runs, and its size.
func (b *Backend) Status(ctx context.Context, g providers.Guest) (providers.GuestStatus, error) {
	var st struct {
		Status  string  `json:"status"`
		MaxMem  int64   `json:"maxmem"`
		MaxDisk int64   `json:"maxdisk"`
		CPUs    float64 `json:"cpus"`
	}
	err := b.api.get(ctx, guestPath(g)+"/status/current", &st)
	if errors.Is(err, providers.ErrNotFound) {
		return providers.GuestStatus{}, nil
	}
	if err != nil {
		return providers.GuestStatus{}, err
	}
	return providers.GuestStatus{Exists: true, Running: st.Status == "running",
		Size: &providers.BoxSize{Cores: int(st.CPUs), MemoryBytes: st.MaxMem, DiskBytes: st.MaxDisk}}, nil
}
