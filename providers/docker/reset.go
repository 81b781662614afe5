package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/docker/boxfiles"
	"github.com/moby/moby/api/types/container"
)

var _ providers.Resetter = (*Backend)(nil)

// ResetGuest makes a Docker box fresh again: a new container of spec's
// image (spec.Template, the box template's source) with a new, empty volume
// of its own, as Acquire makes one, takes the box's place under its name,
// stopped; the old container and its volume go. The box's identity value
// passes on (as in a same-box swap) and its identity marker,
// /.boxsnap/identity, is written again, as in a local box. It runs as its
// template says: spec's user, environment and limits when spec gives any,
// else the old container's. Its snapshots stay (they are images and volume
// copies apart from the container).
//
// A reset cut short runs again from the start: the old container, found
// under its -prev name, is put back first, and a -next an earlier try made
// goes.
func (b *Backend) ResetGuest(ctx context.Context, g providers.Guest, spec providers.BoxSpec) error {
	if spec.Template == "" {
		return &providers.RefusedError{Why: "a Docker box is reset from the image it was made from, and this box names none"}
	}
	old, err := b.resetOld(ctx, g)
	if err != nil {
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	box := spec.Box.ID
	if old.Config != nil && old.Config.Labels[labelBox] != "" {
		box = old.Config.Labels[labelBox]
	}
	if err := b.removeContainer(ctx, nextName(g.Ref)); err != nil {
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	if err := b.removeUnusedVolumes(ctx, box); err != nil {
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	vol, err := b.newVolume(ctx, box)
	if err != nil {
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	s := boxSettings{Image: spec.Template, Identity: box, Volume: vol}
	if id := identityOf(old); id != "" {
		s.Identity = id
	}
	if spec.Command != "" {
		s.Cmd = []string{"/bin/sh", "-c", spec.Command}
	}
	if spec.User != "" || spec.Env != nil || spec.Limits != (providers.BoxLimits{}) {
		s.User, s.Env, s.Limits = spec.User, spec.Env, spec.Limits
	} else {
		s.From = &old
	}
	if err := b.createBox(ctx, nextName(g.Ref), box, s); err != nil {
		_ = b.removeVolume(context.WithoutCancel(ctx), vol)
		return fmt.Errorf("reset box %s from the image %s: %w", g.Ref, spec.Template, err)
	}
	if err := b.writeIdentity(ctx, nextName(g.Ref), box, spec.Template); err != nil {
		_ = b.removeContainer(context.WithoutCancel(ctx), nextName(g.Ref))
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	b.hook("reset:made")
	if err := b.resetSwap(ctx, g); err != nil {
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	return nil
}

// resetOld reads the box's container, stopped, putting back under the box's
// name the old one a reset cut short left as -prev.
func (e *engine) resetOld(ctx context.Context, g providers.Guest) (container.InspectResponse, error) {
	old, ok, err := e.inspect(ctx, g.Ref)
	if err != nil {
		return old, err
	}
	if !ok {
		if _, prev, err := e.inspect(ctx, prevName(g.Ref)); err != nil || !prev {
			return old, fmt.Errorf("the container %s: %w", g.Ref, providers.ErrNotFound)
		}
		if err := e.rename(ctx, prevName(g.Ref), g.Ref); err != nil {
			return old, err
		}
		if old, err = e.mustInspect(ctx, g); err != nil {
			return old, err
		}
	}
	return old, e.stopContainer(ctx, g.Ref, stopGraceSeconds)
}

// resetSwap puts the fresh -next in the box's place, stopped, and removes
// the old container with its volume.
func (e *engine) resetSwap(ctx context.Context, g providers.Guest) error {
	if err := e.removeContainer(ctx, prevName(g.Ref)); err != nil {
		return err
	}
	if err := e.rename(ctx, g.Ref, prevName(g.Ref)); err != nil {
		return err
	}
	if err := e.rename(ctx, nextName(g.Ref), g.Ref); err != nil {
		_ = e.rename(context.WithoutCancel(ctx), prevName(g.Ref), g.Ref) // the box as it was
		return err
	}
	e.hook("reset:swapped")
	return e.removeContainer(ctx, prevName(g.Ref))
}

// writeIdentity writes the identity marker into a box's container, as a
// local box holds it: the box's ID and the version of its image's identity
// reset.
func (b *Backend) writeIdentity(ctx context.Context, name, box, image string) error {
	version := 0
	cctx, cancel := short(ctx)
	img, err := b.c.ImageInspect(cctx, image)
	cancel()
	if err != nil {
		return wrap(err, "read the image "+image)
	}
	if img.Config != nil {
		version, _ = strconv.Atoi(img.Config.Labels[labelReset])
	}
	data, _ := json.Marshal(struct {
		Box          string `json:"box"`
		ResetVersion int    `json:"resetVersion"`
	}{box, version})
	c, err := b.mustInspect(ctx, providers.Guest{Ref: name})
	if err != nil {
		return err
	}
	return b.WriteMarker(ctx, c, name, boxfiles.IdentityFile, data)
}

// WriteBoxFile writes data to rel inside the box's container (relative to
// its root) with mode, through the engine's archive endpoint: each folder
// on the way is checked to be a folder and not a link (a link is refused),
// missing ones are made 0700, and the file, replacing one that is there, is
// given to the box's user. Nothing of the box's runs for it.
func (b *Backend) WriteBoxFile(ctx context.Context, g providers.Guest, rel string, data []byte, mode fs.FileMode) error {
	c, err := b.mustInspect(ctx, g)
	if err != nil {
		return err
	}
	return b.WriteInto(ctx, c, g.Ref, rel, data, mode)
}
