package docker

import (
	"context"
	"log/slog"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/docker/changerecord"
)

// ChangeCadence: a Docker box is checked every 15 seconds, as the local
// backend's boxes are: a check reads the engine's list of the container's
// changes and a scan of its volume's stats, and takes nothing.
func (b *Backend) ChangeCadence() providers.Cadence {
	return providers.Cadence{Every: 15 * time.Second,
		Why: "the engine's list of the container's changes and a scan of its volume answer without a take"}
}

// Changes compares the box with the record of its last take: the
// container's writable layer (the engine's list of changes, and the stat of
// each changed path) and its volume (a scan of its files' stats in the
// volume's checker, a copier container left running for its checks,
// volumelayer.go). It answers unknown only for a box with no record of a take (none
// since boxsnap started, where it keeps no records' files), or that a
// restore made anew; the core then takes one.
func (b *Backend) Changes(ctx context.Context, g providers.Guest) (providers.ChangeCheck, error) {
	c, ok, err := b.inspect(ctx, g.Ref)
	if err != nil || !ok {
		return providers.ChangeCheck{}, err
	}
	out := providers.ChangeCheck{Exists: true, Running: running(c), Changed: providers.ChangedUnknown}
	rec := incremental{b}.recordOf(ctx, c.ID)
	if rec == nil {
		out.Why = "boxsnap has no record of this container's last take"
		return out, nil
	}
	steps := newStepTimes()
	defer func() { steps.log(ctx, b.log, "a check's steps", slog.String("container", c.ID)) }()
	layer, err := incremental{b}.readLayer(ctx, c.ID)
	if err != nil {
		return providers.ChangeCheck{}, err
	}
	steps.mark("layer")
	out.Changed, out.Paths = providers.ChangedYes, changerecord.LayerSince(rec.Layer, layer).Paths()
	if out.Paths > 0 {
		return out, nil
	}
	if err := b.ensureCopier(ctx); err != nil {
		return providers.ChangeCheck{}, err
	}
	vol, err := incremental{b}.scanChecked(ctx, volumeOf(c))
	if err != nil {
		return providers.ChangeCheck{}, err
	}
	steps.mark("volume")
	if out.Paths = changerecord.VolumeSince(rec.Volume, vol); out.Paths == 0 {
		out.Changed = providers.ChangedNo
	}
	return out, nil
}
