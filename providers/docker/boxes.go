package docker

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
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

// host names the engine in a guest: "docker" for a local one, else its
// host (and port).
func (b *Backend) host() string {
	u, err := url.Parse(b.where())
	if err != nil || u.Scheme == "unix" || u.Host == "" {
		return "docker"
	}
	if u.Scheme == "ssh" {
		return u.Hostname()
	}
	return u.Host
}

// where is the engine's address as configured (the client's, for ssh://,
// is a stand-in).
func (b *Backend) where() string {
	if b.cfg.Host != "" {
		return b.cfg.Host
	}
	return b.c.DaemonHost()
}

// boxSettings is what a box's container is made with.
type boxSettings struct {
	Image    string
	Identity string
	Volume   string
	Cmd      []string
	// User, Env and Limits are the box template's (BoxSpec's).
	User   string
	Env    map[string]string
	Limits providers.BoxLimits
	// From copies the settings boxsnap gave an earlier container of the box
	// (its limits and its user), for a swap.
	From *container.InspectResponse
}

// createBox creates (does not start) a box's container.
func (b *Backend) createBox(ctx context.Context, name, box string, s boxSettings) error {
	cfg := &container.Config{
		Image:  s.Image,
		Env:    []string{identityEnvName + "=" + s.Identity},
		Labels: map[string]string{labelInstall: b.cfg.Install, labelBox: box, labelRole: roleBox, labelVolume: s.Volume},
		Cmd:    s.Cmd,
		User:   s.User,
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		if k != identityEnvName {
			cfg.Env = append(cfg.Env, k+"="+s.Env[k])
		}
	}
	// The box's only mount is its own volume; no privileges, no new ones,
	// and the template's bounds (the backend's where it gives none).
	hc := &container.HostConfig{
		Mounts:      []mount.Mount{{Type: mount.TypeVolume, Source: s.Volume, Target: b.cfg.VolumePath}},
		SecurityOpt: []string{"no-new-privileges"},
		Privileged:  false,
	}
	lim := s.Limits
	if lim.MemoryBytes <= 0 {
		lim.MemoryBytes = DefaultMemoryBytes
	}
	if lim.Processes <= 0 {
		lim.Processes = DefaultProcesses
	}
	if lim.OpenFiles <= 0 {
		lim.OpenFiles = DefaultOpenFiles
	}
	pids := int64(lim.Processes)
	hc.Resources.Memory = lim.MemoryBytes
	hc.Resources.PidsLimit = &pids
	hc.Resources.Ulimits = []*container.Ulimit{{Name: "nofile", Soft: int64(lim.OpenFiles), Hard: int64(lim.OpenFiles)}}
	if b.cfg.Network != "" {
		hc.NetworkMode = container.NetworkMode(b.cfg.Network)
	}
	if s.From != nil {
		if s.From.Config != nil {
			cfg.User = s.From.Config.User
			if len(cfg.Cmd) == 0 {
				cfg.Cmd = s.From.Config.Cmd
			}
			for _, e := range s.From.Config.Env {
				if !strings.HasPrefix(e, identityEnvName+"=") && !strings.HasPrefix(e, "PATH=") {
					cfg.Env = append(cfg.Env, e)
				}
			}
		}
		if h := s.From.HostConfig; h != nil {
			hc.Resources.Memory = h.Resources.Memory
			hc.Resources.PidsLimit = h.Resources.PidsLimit
			hc.Resources.Ulimits = h.Resources.Ulimits
			if b.cfg.Network == "" {
				hc.NetworkMode = h.NetworkMode
			}
		}
	}
	cctx, cancel := short(ctx)
	defer cancel()
	if _, err := b.c.ContainerCreate(cctx, client.ContainerCreateOptions{Name: name, Config: cfg, HostConfig: hc}); err != nil {
		return wrap(err, "create the container "+name)
	}
	return nil
}

// newVolume makes a box's own volume, named for the box and a fresh suffix
// (a swap gives the box a new one).
func (b *Backend) newVolume(ctx context.Context, box string) (string, error) {
	var p [4]byte
	_, _ = rand.Read(p[:])
	name := fmt.Sprintf("boxsnap-%s-%x", box, p)
	cctx, cancel := short(ctx)
	defer cancel()
	if _, err := b.c.VolumeCreate(cctx, client.VolumeCreateOptions{Name: name,
		Labels: map[string]string{labelInstall: b.cfg.Install, labelBox: box, labelRole: roleBox}}); err != nil {
		return "", wrap(err, "create the volume "+name)
	}
	return name, nil
}

func (b *Backend) removeVolume(ctx context.Context, name string) error {
	if name == "" {
		return nil
	}
	cctx, cancel := short(ctx)
	defer cancel()
	if _, err := b.c.VolumeRemove(cctx, name, client.VolumeRemoveOptions{Force: true}); err != nil && !errors.Is(wrap(err, ""), providers.ErrNotFound) {
		return wrap(err, "remove the volume "+name)
	}
	return nil
}

// inspect reads a container; ok is false when there is none of that name.
func (b *Backend) inspect(ctx context.Context, name string) (container.InspectResponse, bool, error) {
	cctx, cancel := short(ctx)
	defer cancel()
	r, err := b.c.ContainerInspect(cctx, name, client.ContainerInspectOptions{})
	if err != nil {
		w := wrap(err, "read the container "+name)
		if errors.Is(w, providers.ErrNotFound) {
			return container.InspectResponse{}, false, nil
		}
		return container.InspectResponse{}, false, w
	}
	// A name that matched an ID's prefix is not this container.
	if strings.TrimPrefix(r.Container.Name, "/") != name {
		return container.InspectResponse{}, false, nil
	}
	return r.Container, true, nil
}

// mustInspect reads the box's container, or says it is gone.
func (b *Backend) mustInspect(ctx context.Context, g providers.Guest) (container.InspectResponse, error) {
	c, ok, err := b.inspect(ctx, g.Ref)
	if err != nil {
		return c, err
	}
	if !ok {
		return c, fmt.Errorf("the container %s: %w", g.Ref, providers.ErrNotFound)
	}
	return c, nil
}

func volumeOf(c container.InspectResponse) string {
	if c.Config != nil && c.Config.Labels[labelVolume] != "" {
		return c.Config.Labels[labelVolume]
	}
	return ""
}

func identityOf(c container.InspectResponse) string {
	if c.Config == nil {
		return ""
	}
	for _, e := range c.Config.Env {
		if v, ok := strings.CutPrefix(e, identityEnvName+"="); ok {
			return v
		}
	}
	return ""
}

func running(c container.InspectResponse) bool {
	return c.State != nil && c.State.Running
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

// removeContainer removes a container and the box volume it names; an
// absent one is already removed.
func (b *Backend) removeContainer(ctx context.Context, name string) error {
	c, ok, err := b.inspect(ctx, name)
	if err != nil || !ok {
		return err
	}
	cctx, cancel := short(ctx)
	defer cancel()
	if _, err := b.c.ContainerRemove(cctx, name, client.ContainerRemoveOptions{Force: true}); err != nil && !errors.Is(wrap(err, ""), providers.ErrNotFound) {
		return wrap(err, "remove the container "+name)
	}
	return b.removeVolume(ctx, volumeOf(c))
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

func (b *Backend) stopContainer(ctx context.Context, name string, seconds int) error {
	c, ok, err := b.inspect(ctx, name)
	if err != nil || !ok || !running(c) {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, DefaultRequestTimeout+timeSeconds(seconds))
	defer cancel()
	if c.State.Paused {
		if _, err := b.c.ContainerUnpause(cctx, name, client.ContainerUnpauseOptions{}); err != nil {
			return wrap(err, "unpause "+name)
		}
	}
	_, err = b.c.ContainerStop(cctx, name, client.ContainerStopOptions{Timeout: &seconds})
	return wrap(err, "stop "+name)
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
