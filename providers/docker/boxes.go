package docker

import (
	"context"
	"fmt"

	"github.com/moby/moby/client"

	"github.com/boxsnap/boxsnap/providers"
)

// Acquire makes a box: a named volume of its own and a container made from
// the template's image with that volume at VolumePath, the box's ID as its
// identity value, labels with boxsnap's IDs only, no privileges and no host
// mount, started.
func (b *Backend) Acquire(ctx context.Context, spec providers.BoxSpec) (providers.Guest, error) {
	if spec.Adopt != "" {
		return providers.Guest{}, &providers.RefusedError{Why: "a Docker box is made from a template's image; boxsnap does not adopt a container it did not make, whose data has no volume of its own"}
	}
	if spec.Template == "" {
		return providers.Guest{}, &providers.RefusedError{Why: "a Docker box needs a template: the image it is made from"}
	}
	kind := spec.Box.Kind
	if kind == "" {
		kind = KindLinux
	}
	if b.Snapshotting(kind) == nil {
		return providers.Guest{}, &providers.RefusedError{Why: fmt.Sprintf("the Docker backend runs %s boxes, not %s", KindLinux, kind)}
	}
	ref := boxName(spec.Box.ID)
	vol, err := b.newVolume(ctx, spec.Box.ID)
	if err != nil {
		return providers.Guest{}, err
	}
	cfg := boxSettings{Image: spec.Template, Identity: spec.Box.ID, Volume: vol, User: spec.User, Env: spec.Env, Limits: spec.Limits}
	if spec.Command != "" {
		cfg.Cmd = []string{"/bin/sh", "-c", spec.Command}
	}
	if err := b.createBox(ctx, ref, spec.Box.ID, cfg); err != nil {
		_ = b.removeVolume(context.WithoutCancel(ctx), vol)
		return providers.Guest{}, err
	}
	g := providers.Guest{Backend: b.cfg.ID, Kind: kind, Host: b.host(), Ref: ref, Generation: 1}
	// A container box runs from the start, as its image says.
	if err := b.Start(ctx, g); err != nil {
		_ = b.Release(context.WithoutCancel(ctx), g)
		return providers.Guest{}, err
	}
	return g, nil
}

// Release removes the box's container and its own volume. Its snapshots'
// images and volume copies are apart and stay (kept ones outlive it as they
// are).
func (b *Backend) Release(ctx context.Context, g providers.Guest) error {
	for _, name := range []string{nextName(g.Ref), g.Ref, prevName(g.Ref)} {
		if err := b.removeContainer(ctx, name); err != nil {
			return err
		}
	}
	return nil
}

// Start starts the box's container (a paused one is unpaused).
func (b *Backend) Start(ctx context.Context, g providers.Guest) error {
	c, err := b.mustInspect(ctx, g)
	if err != nil {
		return err
	}
	cctx, cancel := short(ctx)
	defer cancel()
	if c.State != nil && c.State.Paused {
		_, err := b.c.ContainerUnpause(cctx, g.Ref, client.ContainerUnpauseOptions{})
		return wrap(err, "unpause "+g.Ref)
	}
	if running(c) {
		return nil
	}
	_, err = b.c.ContainerStart(cctx, g.Ref, client.ContainerStartOptions{})
	return wrap(err, "start "+g.Ref)
}

// Stop stops the box's container hard.
func (b *Backend) Stop(ctx context.Context, g providers.Guest) error {
	return b.stopContainer(ctx, g.Ref, 0)
}

// Status reads whether the box's container exists and runs.
func (b *Backend) Status(ctx context.Context, g providers.Guest) (providers.GuestStatus, error) {
	c, ok, err := b.inspect(ctx, g.Ref)
	if err != nil || !ok {
		return providers.GuestStatus{}, err
	}
	st := providers.GuestStatus{Exists: true, Running: running(c)}
	if c.HostConfig != nil && c.HostConfig.Resources.Memory > 0 {
		st.Size = &providers.BoxSize{MemoryBytes: c.HostConfig.Resources.Memory}
	}
	return st, nil
}
