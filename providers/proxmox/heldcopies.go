package proxmox

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// heldCopies finds, templates, labels and drops the held copies of
// snapshots: guests of boxsnap's range that keep a snapshot past its box.
type heldCopies struct {
	*lifecycle
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
func (b *heldCopies) findCopies(ctx context.Context, guests []resource, all bool) ([]foundCopy, error) {
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
func (b *heldCopies) template(ctx context.Context, g providers.Guest, rec providers.Recorder) error {
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
func (b *heldCopies) dropCopy(ctx context.Context, g providers.Guest, rec providers.Recorder) error {
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
func (b *heldCopies) setCopyKeptUntil(ctx context.Context, g providers.Guest, keptUntil *time.Time) error {
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
