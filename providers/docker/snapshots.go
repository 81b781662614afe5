package docker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/moby/moby/client"

	"github.com/boxsnap/boxsnap/providers"
)

// DeleteSnapshot removes the snapshot's image tag and its volume copy, and
// nothing else: layers another image or a container still uses stay, as the
// engine keeps them. A snapshot already gone is deleted.
func (b *Backend) DeleteSnapshot(ctx context.Context, ref providers.SnapshotRef, _ providers.Recorder) error {
	return b.deleteParts(ctx, ref.Ref)
}

func (b *Backend) deleteParts(ctx context.Context, snap string) error {
	if snap == "" {
		return errors.New("a snapshot reference is required")
	}
	cctx, cancel := short(ctx)
	defer cancel()
	// Force untags an image a box's container was made from (a restored box
	// or a fork runs on it); the engine keeps the image while it is used.
	if _, err := b.c.ImageRemove(cctx, snapImage(snap), client.ImageRemoveOptions{Force: true}); err != nil {
		if w := wrap(err, "remove the snapshot's image"); !errors.Is(w, providers.ErrNotFound) {
			return w
		}
	}
	return b.removeVolume(ctx, snapVolume(snap))
}

// HeldSnapshots lists this install's snapshots from the labels of their
// images and volume copies; a snapshot with one of the two is incomplete.
func (b *Backend) HeldSnapshots(ctx context.Context) ([]providers.HeldSnapshot, error) {
	cctx, cancel := short(ctx)
	defer cancel()
	f := client.Filters{}.Add("label", labelInstall+"="+b.cfg.Install, labelRole+"="+roleSnapshot)
	imgs, err := b.c.ImageList(cctx, client.ImageListOptions{Filters: f})
	if err != nil {
		return nil, wrap(err, "list the snapshots' images")
	}
	vols, err := b.c.VolumeList(cctx, client.VolumeListOptions{Filters: f})
	if err != nil {
		return nil, wrap(err, "list the snapshots' volumes")
	}
	type parts struct {
		labels      map[string]string
		image, vol  bool
		size        int64
		volumeNamed bool
	}
	found := map[string]*parts{}
	var order []string
	get := func(labels map[string]string) *parts {
		id := labels[labelSnapshot]
		p := found[id]
		if p == nil {
			p = &parts{labels: labels}
			found[id] = p
			order = append(order, id)
		}
		return p
	}
	for _, im := range imgs.Items {
		id := im.Labels[labelSnapshot]
		// An untagged image is a deleted snapshot's, kept by the engine for
		// a container made from it.
		if id == "" || !slices.Contains(im.RepoTags, snapImage(id)) {
			continue
		}
		p := get(im.Labels)
		p.image, p.size = true, im.Size
		p.labels = im.Labels
	}
	for _, v := range vols.Items {
		id := v.Labels[labelSnapshot]
		if id == "" || v.Name != snapVolume(id) {
			continue
		}
		get(v.Labels).vol = true
	}
	out := make([]providers.HeldSnapshot, 0, len(order))
	for _, id := range order {
		p := found[id]
		l := p.labels
		h := providers.HeldSnapshot{
			Ref: providers.SnapshotRef{ID: id, Ref: id, Storage: "docker", Where: "current",
				Guest: providers.Guest{Backend: b.cfg.ID, Kind: KindContainer, Host: b.host(), Ref: boxName(l[labelBox])}},
			Label: providers.Label{Install: l[labelInstall], Box: l[labelBox], Snapshot: id},
			Host:  b.host(), Storage: "docker", Holds: providers.HoldsDisk,
		}
		h.Label.ResetVersion, _ = strconv.Atoi(l[labelReset])
		if t, err := time.Parse(time.RFC3339Nano, l[labelTakenAt]); err == nil {
			h.TakenAt = t
		}
		if k, err := time.Parse(time.RFC3339, l[labelKeptUntil]); err == nil {
			h.Label.KeptUntil = &k
		}
		if p.size > 0 {
			h.Size = &providers.Size{Bytes: p.size, Meaning: "whole"}
		}
		switch {
		case !p.image:
			h.Incomplete, h.Error = true, "its volume's copy exists but its image was never committed: the take was cut short"
		case !p.vol:
			h.Incomplete, h.Error = true, "its image exists but its volume's copy is gone"
		}
		out = append(out, h)
	}
	return out, nil
}

// ForkSnapshot makes a new box from the snapshot: a copy of its volume and a
// container made from its image, with the new box's own identity value
// (section 9: new on a fork). The core starts it.
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
	if _, err := b.copyVolume(ctx, snapVolume(ref.Ref), vol); err != nil {
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
		kind = KindContainer
	}
	return providers.Guest{Backend: b.cfg.ID, Kind: kind, Host: b.host(), Ref: name, Generation: 1}, nil
}

// snapshotWhole says whether both parts of a snapshot exist.
func (b *Backend) snapshotWhole(ctx context.Context, snap string) error {
	cctx, cancel := short(ctx)
	defer cancel()
	if _, err := b.c.ImageInspect(cctx, snapImage(snap)); err != nil {
		return wrap(err, "read the snapshot's image")
	}
	if _, err := b.c.VolumeInspect(cctx, snapVolume(snap), client.VolumeInspectOptions{}); err != nil {
		return wrap(err, "read the snapshot's volume")
	}
	return nil
}

// ProviderTask: the Docker Engine keeps no task list; boxsnap records none.
func (b *Backend) ProviderTask(context.Context, providers.TaskRef) (providers.TaskOutcome, error) {
	return providers.TaskOutcome{}, fmt.Errorf("the Docker engine keeps no tasks: %w", providers.ErrUnsupported)
}
