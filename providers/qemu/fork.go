package qemu

import (
	"context"
	"fmt"
	"os"

	"github.com/boxsnap/boxsnap/providers"
)

// ForkSnapshot extracts the snapshot's disk (qemu-img convert -l, read
// while the source runs) into a new qcow2 of its own and defines a new
// domain on it, from the source's template, with a new MAC address: the
// guest's identity reset makes its own machine ID, SSH host keys and host
// ID at its first boot. It does not start it; asked again, it answers the
// domain already made.
func (b *Backend) ForkSnapshot(ctx context.Context, ref providers.SnapshotRef, box providers.BoxIdentity, rec providers.Recorder) (providers.Guest, error) {
	l, d, _, err := b.snapshot(ctx, ref.Guest, ref.Ref)
	if err != nil {
		return providers.Guest{}, err
	}
	x, err := b.readDomain(l, d)
	if err != nil {
		return providers.Guest{}, err
	}
	if x.Metadata.Box == nil {
		return providers.Guest{}, &providers.RefusedError{Why: fmt.Sprintf("%s is not a box of boxsnap's: it has no template to fork from.", ref.Guest.Ref)}
	}
	tpl, ok := b.cfg.Templates[x.Metadata.Box.Template]
	if !ok {
		return providers.Guest{}, &providers.RefusedError{Why: fmt.Sprintf("The template %q of %s is no longer in the QEMU backend's settings.", x.Metadata.Box.Template, ref.Guest.Ref)}
	}
	if len(x.Devices.Disks) == 0 || x.Devices.Disks[0].Source.File == "" {
		return providers.Guest{}, fmt.Errorf("%s has no disk file", ref.Guest.Ref)
	}
	name := domainName(box.ID)
	g := b.guest(name)
	if _, err := l.DomainLookupByName(name); err == nil {
		return g, nil
	}
	disk := b.diskPath(name)
	tmp := disk + ".part"
	_ = os.Remove(tmp)
	if err := qemuImg(ctx, "convert", "-U", "-l", "snapshot.name="+ref.Ref, "-O", "qcow2", x.Devices.Disks[0].Source.File, tmp); err != nil {
		_ = os.Remove(tmp)
		return g, err
	}
	if err := os.Rename(tmp, disk); err != nil {
		return g, err
	}
	meta := boxMeta{Install: box.Install, Box: box.ID, Template: x.Metadata.Box.Template, Reset: x.Metadata.Box.Reset}
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
