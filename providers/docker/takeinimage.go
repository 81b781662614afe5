package docker

import (
	"context"
	"fmt"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/image"
	"github.com/moby/moby/client"

	"github.com/boxsnap/boxsnap/providers"
)

// captureInImage takes a snapshot whose volume is a part of its image
// (labelVolumeIn): the volume's layers are written, the first while the
// box runs and the second of what changed since in the pause, and loaded
// with the container's layer on the parent take's image (or on a commit of
// the container, with the whole volume, where there is no record of a take
// this process made on the engine's layers). The engine shares the layers,
// so each snapshot is whole on its own after its parent is deleted, and a
// take after a small change reads about that change of the volume.
func (b incremental) captureInImage(ctx context.Context, c container.InspectResponse, name, vol, snap string, labels map[string]string, ownPause bool) (providers.SnapshotTaken, error) {
	labels[labelVolumeIn] = b.cfg.VolumePath
	labels[labelVolume] = ""
	// An empty volume of the snapshot's name marks the take until its tag:
	// a take cut short before it is listed incomplete, and its delete (or
	// the take's next try) removes what it made.
	cctx, cancel := short(ctx)
	_, err := b.c.VolumeCreate(cctx, client.VolumeCreateOptions{Name: snapVolume(snap), Labels: labels})
	cancel()
	if err != nil {
		return providers.SnapshotTaken{}, wrap(err, "mark the take")
	}
	lt := b.layeredOn(ctx, c.ID)
	defer lt.close()
	var prevVol volumeState
	if lt != nil && lt.prev.volumeIn {
		prevVol = lt.prev.volume // the parent image holds the volume as this scan saw it
	}
	vl, err := b.startVolumeLayers(ctx, snap, vol)
	if err != nil {
		return providers.SnapshotTaken{}, err
	}
	defer vl.close(ctx)
	if err := vl.first(ctx, prevVol); err != nil {
		return providers.SnapshotTaken{}, fmt.Errorf("write the volume's layer: %w", err)
	}
	b.hook("take:prepared")
	p, err := b.pauseBox(ctx, name, c, ownPause)
	if err != nil {
		return providers.SnapshotTaken{}, err
	}
	defer func() { _ = p.end() }()
	b.hook("take:paused")
	var layer layerState
	layerDone := make(chan error, 1)
	go func() {
		var err error
		if layer, err = b.readLayer(ctx, c.ID); err == nil && lt != nil {
			err = lt.write(ctx, layer)
		}
		layerDone <- err
	}()
	volNow, volBytes, verr := vl.second(ctx)
	if lerr := <-layerDone; verr != nil || lerr != nil {
		if verr != nil {
			return providers.SnapshotTaken{}, fmt.Errorf("write the volume's layer: %w", verr)
		}
		return providers.SnapshotTaken{}, lerr
	}
	b.hook("take:copied")
	commit := ""
	if lt == nil {
		res, err := b.c.ContainerCommit(ctx, c.ID, client.ContainerCommitOptions{NoPause: true,
			Comment: "boxsnap snapshot " + snap, Config: &container.Config{Labels: labels}})
		if err != nil {
			return providers.SnapshotTaken{}, wrap(err, "commit "+c.ID)
		}
		commit = res.ID
	}
	b.hook("take:committed")
	if err := p.end(); err != nil {
		return providers.SnapshotTaken{}, err
	}
	b.hook("take:unpaused")
	img, err := b.loadTake(ctx, c.ID, snap, commit, labels, lt, vl.layers)
	if err != nil {
		return providers.SnapshotTaken{}, err
	}
	b.keepRecord(c.ID, &changeRecord{snap: snap, layer: layer, volume: volNow, volumeIn: true, image: img.ID, layers: len(img.RootFS.Layers)})
	taken := providers.SnapshotTaken{Ref: snap, Storage: "docker", Holds: providers.HoldsDisk, Paused: p.took}
	if img.Size > 0 {
		taken.Size = &providers.Size{Bytes: max(img.Size, volBytes), Meaning: "whole"}
	}
	return taken, nil
}

// loadTake loads the snapshot's image, tagged: the container's layer and
// the volume's on the parent take's image, or the volume's alone on the
// commit (which then goes), and answers it; the take's mark goes last.
func (b incremental) loadTake(ctx context.Context, id, snap, commit string, labels map[string]string, lt *layeredTake, vol []layerFile) (image.InspectResponse, error) {
	if lt == nil {
		cctx, cancel := short(ctx)
		img, err := b.c.ImageInspect(cctx, commit)
		cancel()
		if err != nil {
			return image.InspectResponse{}, wrap(err, "read the container's commit")
		}
		lt = &layeredTake{b: b.Backend, id: id, parent: img.InspectResponse}
		// The commit is only the loaded image's base: it goes once the
		// image is loaded (the engine keeps the layers they share).
		defer func() {
			rctx, cancel := short(context.WithoutCancel(ctx))
			defer cancel()
			_, _ = b.c.ImageRemove(rctx, commit, client.ImageRemoveOptions{})
		}()
	}
	lt.more = vol
	if _, err := lt.load(ctx, snap, labels); err != nil {
		return image.InspectResponse{}, err
	}
	cctx, cancel := short(ctx)
	defer cancel()
	img, err := b.c.ImageInspect(cctx, snapImage(snap))
	if err != nil {
		return image.InspectResponse{}, wrap(err, "read the snapshot's image")
	}
	if err := b.removeVolume(ctx, snapVolume(snap)); err != nil {
		return image.InspectResponse{}, err
	}
	return img.InspectResponse, nil
}

// pauseHold is a box paused for a take, which end unpauses.
type pauseHold struct {
	b      *Backend
	ctx    context.Context
	name   string
	paused bool
	start  time.Time
	took   time.Duration
}

// pauseBox pauses a running box (one a killed take left paused is this
// take's to end).
func (b *Backend) pauseBox(ctx context.Context, name string, c container.InspectResponse, ownPause bool) (*pauseHold, error) {
	p := &pauseHold{b: b, ctx: ctx, name: name, paused: ownPause, start: time.Now()}
	if running(c) && !c.State.Paused {
		cctx, cancel := short(ctx)
		p.start = time.Now()
		_, err := b.c.ContainerPause(cctx, name, client.ContainerPauseOptions{})
		cancel()
		if err != nil {
			return nil, wrap(err, "pause "+name)
		}
		p.paused = true
	}
	return p, nil
}

// end unpauses the box, even after ctx ends; a second end does nothing.
func (p *pauseHold) end() error {
	if !p.paused {
		return nil
	}
	p.paused = false
	cctx, cancel := short(context.WithoutCancel(p.ctx))
	defer cancel()
	_, err := p.b.c.ContainerUnpause(cctx, p.name, client.ContainerUnpauseOptions{})
	p.took = time.Since(p.start)
	return wrap(err, "unpause "+p.name)
}
