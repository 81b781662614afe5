package proxmox

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/boxsnap/boxsnap/providers"
)

// ForkSnapshot makes a new guest for box from the snapshot: a full clone of
// it, labelled as the box's. The core starts it. Called again after its
// clone's task (a snooze, a restart), it goes on with the clone labelled as
// the box's that this fork made, rather than cloning again.
func (b *Backend) ForkSnapshot(ctx context.Context, ref providers.SnapshotRef, box providers.BoxIdentity, rec providers.Recorder) (providers.Guest, error) {
	if ref.Guest.Kind == KindQEMUWindows {
		return providers.Guest{}, &providers.RefusedError{Why: windowsForkWords}
	}
	snapname := ref.Ref
	if ref.Where == "held-copy" {
		snapname = "" // a held copy is a template: a full clone of it
	}
	g, found, err := b.labelledGuest(ctx, guestLabel(box))
	if err != nil {
		return g, err
	}
	if !found {
		if g, err = b.clone(ctx, ref.Guest, snapname, box.Name, guestLabel(box), true, rec); err != nil {
			return g, err
		}
	}
	g.Kind = ref.Guest.Kind
	// The first request after the clone: it cannot start until boxsnap
	// arms it (onboot 0, links down, on QEMU a new SMBIOS UUID), with the
	// new box's labels; a held copy's or an earlier guest's tags go.
	conf, err := b.readConfig(ctx, g, "")
	if err != nil {
		return g, err
	}
	params := disarmParams(g, conf)
	if tags := str(conf.raw["tags"]); hasTag(tags, HeldTag) || hasTag(tags, EarlierTag) {
		params["tags"] = dropTags(tags, HeldTag, EarlierTag)
	}
	if _, err := b.api.put(ctx, guestPath(g)+"/config", params); err != nil {
		return g, fmt.Errorf("disarm the fork %s: %w", g.Ref, err)
	}
	return g, nil
}

// ArmFork brings a fork's links up before its first start, and sets onboot
// once the check before ready passed.
func (b *Backend) ArmFork(ctx context.Context, g providers.Guest, onboot bool) error {
	conf, err := b.readConfig(ctx, g, "")
	if err != nil {
		return err
	}
	params := map[string]any{"digest": str(conf.raw["digest"])}
	for _, k := range netKeys(conf.raw) {
		params[k] = withLink(str(conf.raw[k]), false)
	}
	if onboot {
		params["onboot"] = 1
	}
	if _, err := b.api.put(ctx, guestPath(g)+"/config", params); err != nil {
		return fmt.Errorf("arm %s: %w", g.Ref, err)
	}
	return nil
}

// CheckFork is the check before ready, from what Proxmox holds: the fork's
// MAC addresses and static IP addresses are none of its source's, and it
// carries the identity reset. A read that fails refuses.
func (b *Backend) CheckFork(ctx context.Context, fork providers.Guest, source providers.SnapshotRef) error {
	fc, err := b.readConfig(ctx, fork, "")
	if err != nil {
		return fmt.Errorf("read the fork %s, so it is not trusted: %w", fork.Ref, err)
	}
	if resetVersion(str(fc.raw["tags"])) == 0 {
		return &providers.RefusedError{Why: fmt.Sprintf("The fork %s carries no identity reset, so it could act as its source.", fork.Ref)}
	}
	sc, err := b.readConfig(ctx, source.Guest, "")
	if errors.Is(err, providers.ErrNotFound) {
		return nil // its source is gone: there is nothing to share
	}
	if err != nil {
		return fmt.Errorf("read the fork's source %s, so the fork is not trusted: %w", source.Guest.Ref, err)
	}
	theirs := addresses(sc.raw)
	for a := range addresses(fc.raw) {
		if theirs[a] {
			return &providers.RefusedError{Why: fmt.Sprintf("The fork %s holds its source's address %s.", fork.Ref, a)}
		}
	}
	return nil
}

var ipRE = regexp.MustCompile(`(?:^|,)ip6?=([^,]+)`)

// addresses are a guest's MAC addresses and static IP addresses, from its
// network settings.
func addresses(raw map[string]any) map[string]bool {
	out := map[string]bool{}
	for _, k := range netKeys(raw) {
		v := str(raw[k])
		for _, m := range macRE.FindAllString(v, -1) {
			out[strings.ToUpper(m)] = true
		}
		for _, m := range ipRE.FindAllStringSubmatch(v, -1) {
			if ip := m[1]; ip != "dhcp" && ip != "auto" && ip != "manual" {
				out[ip] = true
			}
		}
	}
	return out
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

// Release deletes the guest. A guest already gone is released.
func (b *Backend) Release(ctx context.Context, g providers.Guest) error {
	return b.ReleaseRecorded(ctx, g, nil)
}

// ReleaseRecorded is Release with its stop's and destroy's tasks recorded
// with rec (providers.TaskReleaser).
func (b *Backend) ReleaseRecorded(ctx context.Context, g providers.Guest, rec providers.Recorder) error {
	err := b.destroy(ctx, g, rec)
	if errors.Is(err, providers.ErrNotFound) {
		return nil
	}
	return err
}
