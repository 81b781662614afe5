package qemu

import (
	"context"
	"fmt"
	"os"

	"github.com/boxsnap/boxsnap/providers"
)

// ForkSnapshot extracts the snapshot's disk (qemu-img convert -l, read
// while the source runs; an imported snapshot's own qcow2) into a new qcow2
// of its own and defines a new domain on it, from the source's template,
// with a new MAC address: the
// guest's identity reset makes its own machine ID, SSH host keys and host
// ID at its first boot. It does not start it; asked again, it answers the
// domain already made. A disk a fork cut short left with no domain on it
// is copied again from the snapshot, never trusted: the domain is defined
// only once its disk is whole.
func (b *Backend) ForkSnapshot(ctx context.Context, ref providers.SnapshotRef, box providers.BoxIdentity, rec providers.Recorder) (providers.Guest, error) {
	src, err := b.source(ctx, ref)
	if err != nil {
		return providers.Guest{}, err
	}
	tpl, ok := b.cfg.Templates[src.template]
	if !ok {
		return providers.Guest{}, &providers.RefusedError{Why: fmt.Sprintf("The template %q of %s is no longer in the QEMU backend's settings.", src.template, ref.Guest.Ref)}
	}
	l, err := b.conn(ctx)
	if err != nil {
		return providers.Guest{}, err
	}
	name := domainName(box.ID)
	g := b.guest(name)
	if _, err := l.DomainLookupByName(name); err == nil {
		return g, nil
	}
	disk := b.diskPath(name)
	tmp := disk + ".part"
	_ = os.Remove(tmp)
	if err := qemuImg(ctx, append(src.convertArgs(), "-O", "qcow2", src.file, tmp)...); err != nil {
		_ = os.Remove(tmp)
		return g, err
	}
	if err := os.Rename(tmp, disk); err != nil {
		return g, err
	}
	b.at("fork:copied")
	meta := boxMeta{Install: box.Install, Box: box.ID, Template: src.template, Reset: src.reset}
	if meta.Install == "" {
		meta.Install = b.cfg.Install
	}
	if _, err := writeAccess(b.accessPath(name), accessText(providers.Access{Box: box, Generation: g.Generation})); err != nil {
		_ = os.Remove(disk)
		return g, err
	}
	if _, err := l.DomainDefineXML(b.domainDef(name, disk, newMAC(), tpl, meta)); err != nil {
		_ = os.Remove(disk)
		return g, fmt.Errorf("define %s: %w", name, err)
	}
	b.log.InfoContext(ctx, "fork made", "guest", name, "from", ref.Guest.Ref, "snapshot", ref.Ref)
	return g, nil
}
