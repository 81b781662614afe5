package proxmox

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/boxsnap/boxsnap/providers"
)

// GuestIdentity reads what keeps a box the same machine across a swap: its
// network interfaces' MAC addresses, in their order, and on QEMU its SMBIOS.
func (b *Backend) GuestIdentity(ctx context.Context, g providers.Guest) (providers.GuestIdentity, error) {
	conf, err := b.readConfig(ctx, g, "")
	if err != nil {
		return providers.GuestIdentity{}, err
	}
	var id providers.GuestIdentity
	for _, k := range sortedNetKeys(conf.raw) {
		if m := macRE.FindString(str(conf.raw[k])); m != "" {
			id.MACs = append(id.MACs, strings.ToUpper(m))
		}
	}
	if g.Kind != KindLXC {
		id.SMBIOS = str(conf.raw["smbios1"])
	}
	return id, nil
}

func sortedNetKeys(raw map[string]any) []string {
	keys := netKeys(raw)
	n := func(k string) int { i, _ := strconv.Atoi(k[3:]); return i }
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && n(keys[j]) < n(keys[j-1]); j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// adoptingLabel is the description of a guest being adopted for a box,
// until the restore's last step sets the box straight: a restart finds it
// by this, and makes it again.
func adoptingLabel(box providers.BoxIdentity) string { return guestLabel(box) + " adopting" }

// AdoptCopy makes a new guest for the same box from a held copy: a full
// clone, re-armed with the box's MAC addresses and SMBIOS, onboot set and
// links up, before its first start, so the box comes back as itself with no
// identity reset. A guest a restart left half-adopted for this box is never
// trusted: it is deleted first (its tasks recorded as Prior, so a core that
// snoozes on them asks again) and made again, except as cloned
// (providers.HeldCopyCloned), after the core saw this adoption's own clone
// task end OK: that guest, found by its label, is re-armed and answered.
func (b *Backend) AdoptCopy(ctx context.Context, cp providers.SnapshotRef, box providers.BoxIdentity, id providers.GuestIdentity, step providers.HeldCopyStep, rec providers.Recorder) (providers.Guest, error) {
	guests, err := b.resources(ctx)
	if err != nil {
		return providers.Guest{}, err
	}
	var g providers.Guest
	found := false
	for _, r := range guests {
		if !b.inRange(r.VMID) || r.Template == 1 {
			continue
		}
		h := providers.Guest{Backend: b.cfg.ID, Kind: kindOf(r), Host: r.Node, Ref: strconv.Itoa(r.VMID), Generation: 1}
		conf, err := b.readConfig(ctx, h, "")
		if err != nil || str(conf.raw["description"]) != adoptingLabel(box) {
			continue
		}
		if step == providers.HeldCopyCloned && !found && conf.Lock == "" {
			g, found = h, true
			continue
		}
		if err := b.dropCopy(ctx, h, priorRecorder{rec}); err != nil {
			return providers.Guest{}, fmt.Errorf("delete the half-adopted guest %s: %w", h.Ref, err)
		}
	}
	if step == providers.HeldCopyCloned && !found {
		// The clone's task ended OK, and no guest carries its label: it was
		// deleted meanwhile. Cloning again would find none the next time
		// either.
		return providers.Guest{}, fmt.Errorf("the guest that adoption's clone made is not on %s: no guest in boxsnap's range carries its label", b.cfg.ID)
	}
	if !found {
		if g, err = b.clone(ctx, cp.Guest, "", box.Name, adoptingLabel(box), true, rec); err != nil {
			return g, err
		}
	}
	g.Kind = cp.Guest.Kind
	conf, err := b.readConfig(ctx, g, "")
	if err != nil {
		return g, err
	}
	params := map[string]any{"onboot": 1, "digest": str(conf.raw["digest"])}
	for i, k := range sortedNetKeys(conf.raw) {
		v := withLink(str(conf.raw[k]), false)
		if i < len(id.MACs) {
			v = macRE.ReplaceAllString(v, id.MACs[i])
		}
		params[k] = v
	}
	if g.Kind != KindLXC && id.SMBIOS != "" {
		params["smbios1"] = id.SMBIOS
	}
	if tags := str(conf.raw["tags"]); hasTag(tags, HeldTag) {
		params["tags"] = dropTags(tags, HeldTag)
	}
	if _, err := b.api.put(ctx, guestPath(g)+"/config", params); err != nil {
		return g, fmt.Errorf("re-arm %s: %w", g.Ref, err)
	}
	return g, nil
}

// MakeEarlier makes a box's old guest its earlier guest after a swap: in one
// config write, disarmed as a held copy is (onboot 0, links down, on QEMU a
// new SMBIOS UUID), new MAC addresses, so that if it is ever started its
// identity reset runs before its network, and labelled as the box's earlier
// guest. boxsnap never starts it.
func (b *Backend) MakeEarlier(ctx context.Context, g providers.Guest, box providers.BoxIdentity) error {
	conf, err := b.readConfig(ctx, g, "")
	if err != nil {
		return err
	}
	if hasTag(str(conf.raw["tags"]), EarlierTag) {
		return nil // made already, before a restart
	}
	params := disarmParams(g, conf)
	for _, k := range netKeys(conf.raw) {
		params[k] = macRE.ReplaceAllStringFunc(withLink(str(conf.raw[k]), true), func(string) string { return newMAC() })
	}
	params["tags"] = heldTags(EarlierTag, resetVersion(str(conf.raw["tags"])))
	params["description"] = guestLabel(box) + " earlier"
	if _, err := b.api.put(ctx, guestPath(g)+"/config", params); err != nil {
		if le := lockError(g, err.Error()); le != nil {
			return le
		}
		return fmt.Errorf("make %s the earlier guest: %w", g.Ref, err)
	}
	return nil
}

// newMAC is a random locally administered unicast MAC address, in
// Proxmox's upper case.
func newMAC() string {
	u := newUUID()
	h := strings.ReplaceAll(u, "-", "")
	b0, _ := strconv.ParseUint(h[0:2], 16, 8)
	b0 = b0&0xfe | 0x02
	return strings.ToUpper(fmt.Sprintf("%02x:%s:%s:%s:%s:%s", b0, h[2:4], h[4:6], h[6:8], h[8:10], h[10:12]))
}

// SetStraight is a restore's last step on Proxmox: the guest's description
// and tags say the box it is, with the identity reset's version it carries
// and nothing a held copy or an earlier guest carries. It first waits for
// boxsnap's own task still holding a lock; a lock no task holds is the host's
// to clear, and comes back as a *providers.LockedError with the host's
// command. It answers what it set straight, in words.
func (b *Backend) SetStraight(ctx context.Context, g providers.Guest, a providers.Access) ([]string, error) {
	box := a.Box
	conf, err := b.settled(ctx, g, nil)
	if err != nil {
		return nil, err
	}
	var did []string
	params := map[string]any{"digest": str(conf.raw["digest"])}
	if d := str(conf.raw["description"]); d != guestLabel(box) && (d == "" || strings.HasPrefix(d, labelPrefix)) {
		params["description"] = guestLabel(box)
		did = append(did, "its label")
	}
	tags := str(conf.raw["tags"])
	want := dropTags(tags, HeldTag, EarlierTag)
	if !hasTag(want, "boxsnap") {
		want = strings.Trim("boxsnap;"+want, ";")
	}
	if want != tags {
		params["tags"] = want
		did = append(did, "its tags")
	}
	if conf.Lock != "" {
		// Only root clears a lock no task holds (pct unlock): boxsnap's
		// token cannot, so it says so rather than leave it unsaid.
		return did, &providers.LockedError{Lock: providers.Lock{Lock: conf.Lock, Fix: unlockWords(g)}}
	}
	if len(did) == 0 {
		return nil, nil
	}
	if _, err := b.api.put(ctx, guestPath(g)+"/config", params); err != nil {
		if errors.Is(err, providers.ErrNotFound) {
			return nil, err
		}
		return nil, fmt.Errorf("set %s straight: %w", g.Ref, err)
	}
	return did, nil
}
