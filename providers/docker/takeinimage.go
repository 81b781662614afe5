package docker

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/image"
	"github.com/moby/moby/client"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/docker/changerecord"
	"github.com/boxsnap/boxsnap/providers/docker/hoststate"
)

// captureInImage takes a snapshot whose volume is a part of its image
// (labelVolumeIn): while the box runs, the volume's changes since the
// parent take (or the whole volume, with none) are written as a layer, and
// the container's layer is read and its changes since the parent take
// written as a layer on the parent take's image (or, with no record of a
// take on the engine's layers, the container committed whole); in the
// pause only what changed since those reads is written, a layer of the
// container's and one of the volume's, and the whole is loaded on the
// parent take's image or the commit. The engine shares the layers, so each
// snapshot is whole on its own after its parent is deleted, and a take
// after a small change reads about that change.
func (b incremental) captureInImage(ctx context.Context, c container.InspectResponse, name, vol, snap string, labels map[string]string, ownPause bool) (providers.SnapshotTaken, error) {
	labels[labelVolumeIn] = b.cfg.VolumePath
	labels[labelVolume] = ""
	steps := newStepTimes()
	// An empty volume of the snapshot's name marks the take until its tag:
	// a take cut short before it is listed incomplete, and its delete (or
	// the take's next try) removes what it made.
	cctx, cancel := short(ctx)
	_, err := b.c.VolumeCreate(cctx, client.VolumeCreateOptions{Name: snapVolume(snap), Labels: labels})
	cancel()
	if err != nil {
		return providers.SnapshotTaken{}, wrap(err, "mark the take")
	}
	steps.mark("mark")
	lt := b.layeredOn(ctx, c.ID)
	var prevVol changerecord.VolumeState
	if lt != nil && lt.prev.VolumeIn {
		prevVol = lt.prev.Volume // the parent image holds the volume as this scan saw it
	}
	vl, err := b.startVolumeLayers(ctx, snap, vol)
	if err != nil {
		lt.close()
		return providers.SnapshotTaken{}, err
	}
	defer vl.close(ctx)
	steps.mark("copier")
	// A container whose cgroup this process reads runs on its kernel.
	if vl.since, err = vl.stamp(ctx, b.sameKernel(c)); err != nil {
		lt.close()
		return providers.SnapshotTaken{}, err
	}
	steps.mark("stamp")
	pre, err := b.beforePause(ctx, c.ID, snap, labels, lt, vl, prevVol, steps)
	defer pre.lt.close()
	if err != nil {
		return providers.SnapshotTaken{}, err
	}
	b.hook("take:prepared")
	p, err := b.pauseBox(ctx, name, c, ownPause)
	if err != nil {
		return providers.SnapshotTaken{}, err
	}
	defer func() { _ = p.end() }()
	steps.mark("pause")
	b.hook("take:paused")
	layer, volNow, volBytes, err := b.inPause(ctx, c.ID, &pre, vl, steps)
	if err != nil {
		return providers.SnapshotTaken{}, err
	}
	b.hook("take:copied")
	b.hook("take:committed")
	if err := p.end(); err != nil {
		return providers.SnapshotTaken{}, err
	}
	steps.mark("unpause")
	b.hook("take:unpaused")
	img, err := b.loadTake(ctx, snap, pre.commit, labels, pre.lt, vl.layers)
	if err != nil {
		return providers.SnapshotTaken{}, err
	}
	steps.mark("load")
	b.keepRecord(c.ID, &changerecord.ChangeRecord{Snap: snap, Layer: layer, Volume: volNow, VolumeIn: true, Image: img.ID, Layers: len(img.RootFS.Layers),
		Stamp: vl.since})
	steps.mark("record")
	steps.log(ctx, b.log, "a take's steps", slog.String("snapshot", snap), slog.Bool("layered", pre.commit == ""), slog.Duration("paused", p.took))
	taken := providers.SnapshotTaken{Ref: snap, Storage: "docker", Holds: providers.HoldsDisk, Paused: p.took}
	if img.Size > 0 {
		taken.Size = &providers.Size{Bytes: max(img.Size, volBytes), Meaning: "whole"}
	}
	return taken, nil
}

// prepared is what a take wrote before its pause, the box running.
type prepared struct {
	// lt is the take's layers on its parent: the last take's image, or
	// the commit.
	lt *layeredTake
	// then is the container's layer as read, and since the stamp taken
	// before the read (changerecord.RacyLayer).
	then  changerecord.LayerState
	since time.Time
	// commit is the container's commit, where there is no record of a
	// take on the engine's layers: the loaded image's base, removed once
	// it is loaded.
	commit string
}

// beforePause runs, the box running, the volume's first pass and beside it
// the container's: its layer read, and what changed since the last take
// written as a layer on that take's image, or with none the container
// committed whole.
func (b incremental) beforePause(ctx context.Context, id, snap string, labels map[string]string, lt *layeredTake, vl *volumeLayers, prevVol changerecord.VolumeState, steps *stepTimes) (prepared, error) {
	pre := prepared{lt: lt, since: vl.since}
	layerDone := make(chan error, 1)
	go func() {
		start := time.Now()
		err := b.layerBeforePause(ctx, id, snap, labels, &pre)
		steps.since("layer_first", start)
		layerDone <- err
	}()
	verr := vl.first(ctx, prevVol)
	if verr == nil {
		verr = vl.arm(ctx)
	}
	steps.mark("volume_first")
	lerr := <-layerDone
	if verr != nil {
		return pre, fmt.Errorf("write the volume's layer: %w", verr)
	}
	return pre, lerr
}

// layerBeforePause reads the container's layer and writes it into pre.
func (b incremental) layerBeforePause(ctx context.Context, id, snap string, labels map[string]string, pre *prepared) error {
	then, err := b.readLayer(ctx, id)
	if err != nil {
		return err
	}
	pre.then = then
	if pre.lt != nil {
		return pre.lt.write(ctx, then)
	}
	res, err := b.c.ContainerCommit(ctx, id, client.ContainerCommitOptions{NoPause: true,
		Comment: "boxsnap snapshot " + snap, Config: &container.Config{Labels: labels}})
	if err != nil {
		return wrap(err, "commit "+id)
	}
	pre.commit = res.ID
	cctx, cancel := short(ctx)
	defer cancel()
	img, err := b.c.ImageInspect(cctx, res.ID)
	if err != nil {
		return wrap(err, "read the container's commit")
	}
	pre.lt = &layeredTake{b: b.Backend, id: id, parent: img.InspectResponse}
	return nil
}

// inPause reads the container's layer again, the box paused, and writes
// the paths changed since the read before the pause (and those written
// then so near the read that their stat may not tell), beside the
// volume's second pass; it answers the layer and the volume as they are
// (the take's record) and the bytes of the volume's files.
func (b incremental) inPause(ctx context.Context, id string, pre *prepared, vl *volumeLayers, steps *stepTimes) (changerecord.LayerState, changerecord.VolumeState, int64, error) {
	var now changerecord.LayerState
	layerDone := make(chan error, 1)
	go func() {
		start := time.Now()
		var err error
		if now, err = b.readLayer(ctx, id); err == nil {
			steps.since("layer_read", start)
			err = pre.lt.writePaused(ctx, changerecord.RacyLayer(changerecord.LayerSince(pre.then, now), pre.then, now, pre.since))
		}
		steps.since("layer", start)
		layerDone <- err
	}()
	volNow, volBytes, verr := vl.second(ctx)
	steps.mark("volume_second")
	lerr := <-layerDone
	steps.mark("layer_wait")
	if verr != nil {
		return nil, nil, 0, fmt.Errorf("write the volume's layer: %w", verr)
	}
	if lerr != nil {
		return nil, nil, 0, lerr
	}
	return now, volNow, volBytes, nil
}

// loadTake loads the snapshot's image, tagged: the container's layers and
// the volume's on the parent take's image or the commit (which then goes),
// and answers it; the take's mark goes last.
func (b incremental) loadTake(ctx context.Context, snap, commit string, labels map[string]string, lt *layeredTake, vol []layerFile) (image.InspectResponse, error) {
	if commit != "" {
		// The commit is only the loaded image's base: it goes once the
		// image is loaded (the engine keeps the layers they share).
		defer func() {
			rctx, cancel := short(context.WithoutCancel(ctx))
			defer cancel()
			_, _ = b.c.ImageRemove(rctx, commit, client.ImageRemoveOptions{})
		}()
	}
	lt.more = append(lt.more, vol...)
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
	// frozen is the freeze of the box's cgroup, where the pause is one
	// (package hoststate); rec records the engine's pause, where it is the
	// engine's.
	frozen *hoststate.Freeze
	rec    *os.File
}

// sameKernel says whether the container runs on this process's kernel: a
// local engine's, whose cgroup is read here.
func (b *Backend) sameKernel(c container.InspectResponse) bool {
	return b.local() && c.State != nil && b.state().FreezerFile(c.State.Pid, c.ID) != ""
}

// pauseBox pauses a running box (one a killed take left paused is this
// take's to end): its cgroup frozen where boxsnap can reach it, else by the
// engine.
func (b *Backend) pauseBox(ctx context.Context, name string, c container.InspectResponse, ownPause bool) (*pauseHold, error) {
	p := &pauseHold{b: b, ctx: ctx, name: name, paused: ownPause, start: time.Now()}
	if ownPause {
		p.rec = b.records.adopted.Take(c.ID)
	}
	if running(c) && !c.State.Paused {
		p.start = time.Now()
		if b.sameKernel(c) {
			p.frozen = b.state().Freeze(c.State.Pid, c.ID)
		}
		if p.frozen != nil {
			p.paused = true
			return p, nil
		}
		p.rec = b.state().RecordEnginePause(c.ID)
		cctx, cancel := short(ctx)
		p.start = time.Now()
		_, err := b.c.ContainerPause(cctx, name, client.ContainerPauseOptions{})
		cancel()
		if err != nil {
			p.dropRecord()
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
	if p.frozen != nil {
		err := p.frozen.Thaw()
		p.took = time.Since(p.start)
		return err
	}
	cctx, cancel := short(context.WithoutCancel(p.ctx))
	defer cancel()
	_, err := p.b.c.ContainerUnpause(cctx, p.name, client.ContainerUnpauseOptions{})
	p.took = time.Since(p.start)
	if err == nil {
		p.dropRecord()
	}
	return wrap(err, "unpause "+p.name)
}

// dropRecord drops the record of the engine's pause.
func (p *pauseHold) dropRecord() {
	if p.rec != nil {
		hoststate.DropHeld(p.rec)
		p.rec = nil
	}
}
