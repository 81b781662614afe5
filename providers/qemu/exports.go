package qemu

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// diskSource is where a snapshot's disk is read from: a box's qcow2 and the
// internal snapshot's name, or an imported snapshot's qcow2 of its own.
type diskSource struct {
	file     string
	snapshot string // empty for an imported snapshot's file
	template string
	reset    int
	parent   string
	takenAt  time.Time
}

// convertArgs are qemu-img convert's arguments that read the source.
func (s diskSource) convertArgs() []string {
	args := []string{"convert", "-U", "-f", "qcow2"}
	if s.snapshot != "" {
		args = append(args, "-l", "snapshot.name="+s.snapshot)
	}
	return args
}

// source finds where the snapshot's disk is read from.
func (b *archives) source(ctx context.Context, ref providers.SnapshotRef) (diskSource, error) {
	if ref.Where == heldWhere {
		return b.heldSource(ref.ID)
	}
	if id, ok := importedID(ref.Ref); ok {
		m, err := b.importedMeta(id)
		if err != nil {
			return diskSource{}, err
		}
		return diskSource{file: b.importedDisk(id), template: m.Template, reset: m.Reset, parent: m.Parent, takenAt: m.TakenAt}, nil
	}
	l, d, s, err := b.snapshot(ctx, ref.Guest, ref.Ref)
	if err != nil {
		return diskSource{}, err
	}
	x, err := b.readDomain(l, d)
	if err != nil {
		return diskSource{}, err
	}
	if x.Metadata.Box == nil {
		return diskSource{}, &providers.RefusedError{Why: fmt.Sprintf("%s is not a box of boxsnap's: it has no template.", ref.Guest.Ref)}
	}
	if len(x.Devices.Disks) == 0 || x.Devices.Disks[0].Source.File == "" {
		return diskSource{}, fmt.Errorf("%s has no disk file", ref.Guest.Ref)
	}
	sx, err := b.readSnapshot(l, s)
	if err != nil {
		return diskSource{}, err
	}
	return diskSource{file: x.Devices.Disks[0].Source.File, snapshot: ref.Ref, template: x.Metadata.Box.Template,
		reset: x.Metadata.Box.Reset, parent: sx.Parent.Name, takenAt: sx.takenAt()}, nil
}

// Scrub: a guest's disk is one file system the backend reads but never
// rewrites, so it makes no scrubbed copy.
func (b *archives) Scrub(context.Context, providers.SnapshotRef, providers.Secrets) (*providers.ScrubReport, error) {
	return nil, &providers.RefusedError{Why: "The QEMU backend cannot take files out of a guest's disk: share its snapshots whole, by export."}
}

// ExportSnapshot writes one snapshot as one archive: its disk extracted into
// a qcow2 of its own (qemu-img convert -l), or, with opts.Base, a qcow2
// over the base's disk holding only the clusters that differ from it.
func (b *archives) ExportSnapshot(ctx context.Context, ref providers.SnapshotRef, opts providers.ExportOptions, w io.Writer) error {
	if opts.Scrub != nil {
		_, err := b.Scrub(ctx, ref, *opts.Scrub)
		return err
	}
	src, err := b.source(ctx, ref)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	tmp, err := b.workDir("export-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	disk := filepath.Join(tmp, archiveDisk)
	if err := qemuImg(ctx, append(src.convertArgs(), "-O", "qcow2", src.file, disk)...); err != nil {
		return fmt.Errorf("export snapshot %s: %w", ref.ID, err)
	}
	info := archiveInfo{Format: archiveFormat, Kind: archiveKind, ID: ref.ID, Name: opts.Name, Parent: src.parent,
		Template: src.template, Reset: src.reset, TakenAt: src.takenAt}
	if info.Name == "" {
		info.Name = ref.ID
	}
	if opts.Base != nil {
		if disk, err = b.againstBase(ctx, *opts.Base, tmp, disk); err != nil {
			return fmt.Errorf("export snapshot %s against %s: %w", ref.ID, opts.Base.ID, err)
		}
		info.Base = opts.Base.ID
	}
	if info.DiskSha256, info.DiskBytes, err = fileSum(disk); err != nil {
		return fmt.Errorf("export snapshot %s: %w", ref.ID, err)
	}
	return writeArchive(info, disk, w)
}

// againstBase makes the incremental disk: an empty qcow2 over the whole
// one, rebased (safely, comparing both) onto the base's disk, so it keeps
// exactly the clusters where the two differ; its backing file is then
// renamed baseName, which the import replaces with its own copy.
func (b *archives) againstBase(ctx context.Context, base providers.SnapshotRef, tmp, whole string) (string, error) {
	bs, err := b.source(ctx, base)
	if err != nil {
		return "", err
	}
	baseDisk := filepath.Join(tmp, "base.qcow2")
	if err := qemuImg(ctx, append(bs.convertArgs(), "-O", "qcow2", bs.file, baseDisk)...); err != nil {
		return "", err
	}
	diff := filepath.Join(tmp, "diff.qcow2")
	if err := qemuImg(ctx, "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b", whole, diff); err != nil {
		return "", err
	}
	if err := qemuImg(ctx, "rebase", "-q", "-f", "qcow2", "-F", "qcow2", "-b", baseDisk, diff); err != nil {
		return "", err
	}
	if err := qemuImg(ctx, "rebase", "-q", "-u", "-f", "qcow2", "-F", "qcow2", "-b", baseName, diff); err != nil {
		return "", err
	}
	return diff, nil
}

// heldSource is where a held copy's disk is read from; one not whole wraps
// ErrNotFound, since it holds nothing to read yet.
func (b *archives) heldSource(id string) (diskSource, error) {
	m, err := b.readHeld(id)
	if err != nil {
		return diskSource{}, err
	}
	if !m.Whole {
		return diskSource{}, fmt.Errorf("the held copy of %s was cut short: %w", id, providers.ErrNotFound)
	}
	return diskSource{file: b.heldDisk(id), template: m.Template, reset: m.Reset, parent: m.Parent, takenAt: m.TakenAt}, nil
}
