package proxmox

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// Tags boxsnap puts on the guests it keeps apart from boxes: a held copy, and
// a box's earlier guest after a swap. The listing finds them by these and by
// their labels.
const (
	HeldTag    = "boxsnap-held"
	EarlierTag = "boxsnap-earlier"
)

// inRange reports whether vmid is in boxsnap's range.
func (b *Backend) inRange(vmid int) bool { return vmid >= b.cfg.VMIDFirst && vmid <= b.cfg.VMIDLast }

// kindOf is a resource's box kind.
func kindOf(r resource) string {
	if r.Type == "lxc" {
		return KindLXC
	}
	return KindQEMU
}

func hasTag(tags, tag string) bool {
	for _, t := range strings.FieldsFunc(tags, func(r rune) bool { return r == ';' || r == ',' || r == ' ' }) {
		if t == tag {
			return true
		}
	}
	return false
}

// heldTags are a held copy's or an earlier guest's tags: boxsnap's, what it
// is, and the identity reset's version, which a fork of it checks.
func heldTags(what string, reset int) string {
	t := "boxsnap"
	if what != "" {
		t += ";" + what
	}
	if reset > 0 {
		t += fmt.Sprintf(";%s%d", ResetTagPrefix, reset)
	}
	return t
}

// foundCopy is a held copy of one snapshot found on the cluster.
type foundCopy struct {
	guest    providers.Guest
	label    providers.Label
	template bool
	lock     string
}

// findCopies lists this install's held copies in boxsnap's range, read from
// their labels: a config read per guest of the range that may be one (every
// one when all is set, as a copy cut short before its disarm carries no tag
// yet; otherwise templates, tagged copies and guests a clone still locks).
func (b *Backend) findCopies(ctx context.Context, guests []resource, all bool) ([]foundCopy, error) {
	var out []foundCopy
	for _, r := range guests {
		if !b.inRange(r.VMID) || r.Status == "unknown" {
			continue
		}
		if !all && r.Template != 1 && !hasTag(r.Tags, HeldTag) && r.Lock == "" {
			continue
		}
		g := providers.Guest{Backend: b.cfg.ID, Kind: kindOf(r), Host: r.Node, Ref: strconv.Itoa(r.VMID)}
		conf, err := b.readConfig(ctx, g, "")
		if errors.Is(err, providers.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		l, ok := ParseLabel(str(conf.raw["description"]))
		if !ok || l.Held == "" || l.Install != b.cfg.Install {
			continue
		}
		if l.Kind != "" {
			g.Kind = l.Kind
		}
		out = append(out, foundCopy{guest: g, label: l, template: conf.Template, lock: conf.Lock})
	}
	return out, nil
}

// HoldCopy runs one step of a held copy:
//
//   - clone: a full clone of the snapshot (or of the stopped guest, when
//     source.Ref is empty) into a VMID of boxsnap's range, in its pool,
//     labelled with the install, box, snapshot, keep date, the snapshot's
//     time, the box's kind and the identity reset's version. A copy of the
//     same snapshot found already is used when it is a template; one that is
//     not yet a template is never trusted: it is disarmed, deleted and made
//     again (Remade), except as cloned (providers.HeldCopyCloned), after the
//     core saw that copy's own clone task end OK;
//   - disarm: in one config write, onboot 0, every link down, on QEMU a new
//     SMBIOS UUID, and the held copy's tags;
//   - template: make it a template, and wait until Proxmox lists it so.
func (b *Backend) HoldCopy(ctx context.Context, source providers.SnapshotRef, label providers.Label, step providers.HeldCopyStep, rec providers.Recorder) (providers.HeldCopyProgress, error) {
	p := providers.HeldCopyProgress{Step: step}
	switch step {
	case providers.HeldCopyClone, providers.HeldCopyCloned:
		if source.Guest.Kind == KindQEMUWindows {
			return p, &providers.RefusedError{Why: "Windows boxes are not kept: with no fork, a held copy could not be used."}
		}
		guests, err := b.resources(ctx)
		if err != nil {
			return p, err
		}
		found, err := b.findCopies(ctx, guests, true)
		if err != nil {
			return p, err
		}
		for _, f := range found {
			if f.label.Snapshot != label.Snapshot || f.label.Box != label.Box {
				continue
			}
			if f.template || step == providers.HeldCopyCloned && f.lock == "" {
				// A template is trusted; so is the copy whose own clone
				// the core saw end OK, which disarm and template finish.
				p.Copy = &providers.SnapshotRef{ID: source.ID, Ref: source.Ref, Guest: f.guest, Storage: source.Storage, Where: "held-copy"}
				p.Template, p.Done, p.ResetVersion = f.template, true, f.label.ResetVersion
				p.Step = providers.HeldCopyClone
				return p, nil
			}
			if err := b.dropCopy(ctx, f.guest, nil); err != nil {
				return p, fmt.Errorf("delete the copy %s that was not a template: %w", f.guest.Ref, err)
			}
			p.Remade = true
		}
		if step == providers.HeldCopyCloned && !p.Remade {
			// The clone's task ended OK, and no copy carries its label: it
			// was deleted meanwhile, or is labelled for another install.
			// Cloning again would find none the next time either.
			return p, fmt.Errorf("the held copy that clone made is not on %s: no guest in boxsnap's range carries its label", b.cfg.ID)
		}
		if label.Kind == "" {
			label.Kind = source.Guest.Kind
		}
		if source.Ref == "" && label.ResetVersion == 0 {
			// A copy of the stopped guest carries the guest's own reset.
			conf, err := b.readConfig(ctx, source.Guest, "")
			if err != nil {
				return p, err
			}
			label.ResetVersion = resetVersion(str(conf.raw["tags"]))
		}
		p.ResetVersion = label.ResetVersion
		g, err := b.clone(ctx, source.Guest, source.Ref, "", Describe(label), true, rec)
		if err != nil {
			return p, err
		}
		g.Kind = source.Guest.Kind
		p.Copy = &providers.SnapshotRef{ID: source.ID, Ref: source.Ref, Guest: g, Storage: source.Storage, Where: "held-copy"}
	case providers.HeldCopyDisarm:
		g := source.Guest
		conf, err := b.readConfig(ctx, g, "")
		if err != nil {
			return p, err
		}
		l, _ := ParseLabel(str(conf.raw["description"]))
		params := disarmParams(g, conf)
		params["tags"] = heldTags(HeldTag, l.ResetVersion)
		if _, err := b.api.put(ctx, guestPath(g)+"/config", params); err != nil {
			return p, fmt.Errorf("disarm %s: %w", g.Ref, err)
		}
		p.Copy = &source
	case providers.HeldCopyTemplate:
		if err := b.template(ctx, source.Guest, rec); err != nil {
			return p, err
		}
		p.Copy = &source
	default:
		return p, fmt.Errorf("held copy step %q: %w", step, providers.ErrUnsupported)
	}
	p.Done = true
	return p, nil
}

// disarmParams are the config write that keeps a guest from starting as its
// box: onboot 0, every link down, and on QEMU a new SMBIOS UUID.
func disarmParams(g providers.Guest, conf guestConfig) map[string]any {
	params := map[string]any{"onboot": 0, "digest": str(conf.raw["digest"])}
	for _, k := range netKeys(conf.raw) {
		params[k] = withLink(str(conf.raw[k]), true)
	}
	if g.Kind != KindLXC {
		params["smbios1"] = "uuid=" + newUUID()
	}
	return params
}

// template makes g a template and waits until Proxmox lists it so: LXC's
// call answers null though a task runs.
func (b *Backend) template(ctx context.Context, g providers.Guest, rec providers.Recorder) error {
	conf, err := b.readConfig(ctx, g, "")
	if err != nil {
		return err
	}
	if !conf.Template {
		upid, err := b.api.post(ctx, guestPath(g)+"/template", nil)
		if err != nil {
			return fmt.Errorf("make %s a template: %w", g.Ref, err)
		}
		if upid != "" {
			if _, err := b.api.wait(ctx, upid, rec); err != nil {
				return fmt.Errorf("make %s a template: %w", g.Ref, err)
			}
		}
	}
	deadline := time.Now().Add(b.cfg.TaskTimeout)
	for {
		conf, err := b.readConfig(ctx, g, "")
		if err != nil {
			return err
		}
		if conf.Template {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s is not a template after %s", g.Ref, b.cfg.TaskTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(b.cfg.PollEvery):
		}
	}
}

// dropCopy deletes a part-made copy: it waits for a task still holding its
// lock, disarms it (so it cannot start as its source meanwhile), then
// deletes it, recording its stop's and destroy's tasks with rec. One already
// gone is dropped.
func (b *Backend) dropCopy(ctx context.Context, g providers.Guest, rec providers.Recorder) error {
	conf, err := b.settled(ctx, g, nil)
	if errors.Is(err, providers.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if conf.Lock == "create" || conf.Lock == "clone" {
		// Proxmox lists a clone's task under its source's VMID only: wait
		// for the node's clones still running, then read the copy again.
		if err := b.waitClones(ctx, g); err != nil {
			return err
		}
		if conf, err = b.readConfig(ctx, g, ""); errors.Is(err, providers.ErrNotFound) {
			return nil // the clone failed, and Proxmox removed its target
		} else if err != nil {
			return err
		}
	}
	if !conf.Template && conf.Lock == "" {
		if _, err := b.api.put(ctx, guestPath(g)+"/config", disarmParams(g, conf)); err != nil && !errors.Is(err, providers.ErrNotFound) {
			return fmt.Errorf("disarm %s: %w", g.Ref, err)
		}
	}
	return b.destroy(ctx, g, rec)
}

// heldCopiesListed lists held copies as HeldSnapshots for the reconcile: a
// copy that is not a template is listed incomplete, never as what it holds.
func heldCopiesListed(found []foundCopy) []providers.HeldSnapshot {
	var out []providers.HeldSnapshot
	for _, f := range found {
		h := providers.HeldSnapshot{Ref: providers.SnapshotRef{ID: f.label.Snapshot, Ref: f.label.Held, Guest: f.guest, Where: "held-copy"},
			Label: f.label, Host: f.guest.Host, Holds: providers.HoldsDisk}
		if f.label.SnapshotAt != nil {
			h.TakenAt = *f.label.SnapshotAt
		}
		if !f.template {
			h.Incomplete = true
			h.Error = fmt.Sprintf("its held copy %s is not a template, so it is not trusted", f.guest.Ref)
		}
		out = append(out, h)
	}
	return out
}

// setCopyKeptUntil rewrites a held copy's label with its keep date.
func (b *Backend) setCopyKeptUntil(ctx context.Context, g providers.Guest, keptUntil *time.Time) error {
	conf, err := b.readConfig(ctx, g, "")
	if err != nil {
		return err
	}
	l, ok := ParseLabel(str(conf.raw["description"]))
	if !ok || l.Held == "" {
		return fmt.Errorf("guest %s has no held copy's label", g.Ref)
	}
	l.KeptUntil = keptUntil
	if _, err := b.api.put(ctx, guestPath(g)+"/config", map[string]any{"description": Describe(l), "digest": str(conf.raw["digest"])}); err != nil {
		return fmt.Errorf("label the held copy %s: %w", g.Ref, err)
	}
	return nil
}

// dropTags removes tags from a guest's tag list.
func dropTags(tags string, drop ...string) string {
	var keep []string
next:
	for _, t := range strings.FieldsFunc(tags, func(r rune) bool { return r == ';' || r == ',' || r == ' ' }) {
		for _, d := range drop {
			if t == d {
				continue next
			}
		}
		keep = append(keep, t)
	}
	return strings.Join(keep, ";")
}

// waitClones waits for every clone task still running on g's node.
func (b *Backend) waitClones(ctx context.Context, g providers.Guest) error {
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
