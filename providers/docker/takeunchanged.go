package docker

import (
	"context"
	"log/slog"

	"github.com/moby/moby/api/types/container"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/docker/changerecord"
)

// takeUnchanged takes the snapshot of a box that changed nothing since its
// last take with no pause and no copier of its own: where the record of
// that take is settled (no path's time falls in the tick of its reads), and
// the container's layer (the engine's list of changes and each path's stat)
// and the volume (a scan in the volume's checker) read as the record says,
// the box was, at the first of those reads, as that take's image holds it.
// The snapshot is then that image's layers under a config of its own,
// loaded and tagged in one step. ok is false where it cannot tell, and the
// take goes as any other; an error is the load's.
func (b incremental) takeUnchanged(ctx context.Context, c container.InspectResponse, snap string, labels map[string]string) (providers.SnapshotTaken, bool, error) {
	prev := b.recordOf(ctx, c.ID)
	if prev == nil || !prev.VolumeIn || !prev.Settled() || !b.loadsOnLayers(ctx) {
		return providers.SnapshotTaken{}, false, nil
	}
	steps := newStepTimes()
	labels[labelVolumeIn] = b.cfg.VolumePath
	labels[labelVolume] = ""
	layer, err := b.readLayer(ctx, c.ID)
	if err != nil || changerecord.LayerSince(prev.Layer, layer).Paths() > 0 {
		return providers.SnapshotTaken{}, false, nil
	}
	steps.mark("layer")
	vol, err := b.scanChecked(ctx, volumeOf(c))
	if err != nil || changerecord.VolumeSince(prev.Volume, vol) > 0 {
		return providers.SnapshotTaken{}, false, nil
	}
	steps.mark("volume")
	lt := b.layeredOn(ctx, c.ID)
	if lt == nil {
		return providers.SnapshotTaken{}, false, nil
	}
	if _, err := lt.load(ctx, snap, labels); err != nil {
		return providers.SnapshotTaken{}, true, err
	}
	steps.mark("load")
	cctx, cancel := short(ctx)
	defer cancel()
	img, err := b.c.ImageInspect(cctx, snapImage(snap))
	if err != nil {
		return providers.SnapshotTaken{}, true, wrap(err, "read the snapshot's image")
	}
	b.keepRecord(c.ID, &changerecord.ChangeRecord{Snap: snap, Layer: prev.Layer, Volume: prev.Volume, VolumeIn: true,
		Image: img.ID, Layers: len(img.RootFS.Layers), Stamp: prev.Stamp})
	steps.log(ctx, b.log, "a take of an unchanged box's steps", slog.String("snapshot", snap))
	taken := providers.SnapshotTaken{Ref: snap, Storage: "docker", Holds: providers.HoldsDisk}
	if img.Size > 0 {
		taken.Size = &providers.Size{Bytes: img.Size, Meaning: "whole"} // the image holds the volume
	}
	return taken, true, nil
}
