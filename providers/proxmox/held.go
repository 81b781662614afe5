package proxmox

import (
	"context"
	"fmt"

	"github.com/boxsnap/boxsnap/providers"
)

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
