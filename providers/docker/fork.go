package docker

import (
	"context"
	"fmt"

	"github.com/boxsnap/boxsnap/providers"
)

// ForkSnapshot makes a new box from the snapshot: a copy of its volume and a
// container made from its image, with the new box's own identity value (new
// on a fork). The core starts it.
func (b *Backend) ForkSnapshot(ctx context.Context, ref providers.SnapshotRef, box providers.BoxIdentity, _ providers.Recorder) (providers.Guest, error) {
	if err := b.snapshotWhole(ctx, ref.Ref); err != nil {
		return providers.Guest{}, err
	}
	src, _, err := b.inspect(ctx, ref.Guest.Ref)
	if err != nil {
		return providers.Guest{}, err
	}
	vol, err := b.newVolume(ctx, box.ID)
	if err != nil {
		return providers.Guest{}, err
	}
	if err := b.fillFromSnapshot(ctx, ref.Ref, vol); err != nil {
		_ = b.removeVolume(context.WithoutCancel(ctx), vol)
		return providers.Guest{}, fmt.Errorf("copy the snapshot's volume: %w", err)
	}
	s := boxSettings{Image: snapImage(ref.Ref), Identity: box.ID, Volume: vol}
	if src.Config != nil {
		s.From = &src
	}
	name := boxName(box.ID)
	if err := b.createBox(ctx, name, box.ID, s); err != nil {
		_ = b.removeVolume(context.WithoutCancel(ctx), vol)
		return providers.Guest{}, err
	}
	kind := box.Kind
	if kind == "" {
		kind = KindLinux
	}
	return providers.Guest{Backend: b.cfg.ID, Kind: kind, Host: b.host(), Ref: name, Generation: 1}, nil
}
