package docker

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/docker/changerecord"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/image"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"
)

// The containers and volumes calls the backend's parts share: the engine
// reads a box's container, makes and removes containers and volumes, through
// the one client the engine type holds.

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
func (e *engine) createBox(ctx context.Context, name, box string, s boxSettings) error {
	cfg := &container.Config{
		Image:  s.Image,
		Env:    []string{identityEnvName + "=" + s.Identity},
		Labels: map[string]string{labelInstall: e.cfg.Install, labelBox: box, labelRole: roleBox, labelVolume: s.Volume},
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
		Mounts:      []mount.Mount{{Type: mount.TypeVolume, Source: s.Volume, Target: e.cfg.VolumePath}},
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
	if e.cfg.Network != "" {
		hc.NetworkMode = container.NetworkMode(e.cfg.Network)
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
			if e.cfg.Network == "" {
				hc.NetworkMode = h.NetworkMode
			}
		}
	}
	cctx, cancel := short(ctx)
	defer cancel()
	if _, err := e.c.ContainerCreate(cctx, client.ContainerCreateOptions{Name: name, Config: cfg, HostConfig: hc}); err != nil {
		return wrap(err, "create the container "+name)
	}
	return nil
}

// newVolume makes a box's own volume, named for the box and a fresh suffix
// (a swap gives the box a new one).
func (e *engine) newVolume(ctx context.Context, box string) (string, error) {
	var p [4]byte
	_, _ = rand.Read(p[:])
	name := fmt.Sprintf("boxsnap-%s-%x", box, p)
	cctx, cancel := short(ctx)
	defer cancel()
	if _, err := e.c.VolumeCreate(cctx, client.VolumeCreateOptions{Name: name,
		Labels: map[string]string{labelInstall: e.cfg.Install, labelBox: box, labelRole: roleBox}}); err != nil {
		return "", wrap(err, "create the volume "+name)
	}
	return name, nil
}

// checkerName names the copier container a box's volume is scanned in by
// its checks: one per volume, made at the volume's first check and left
// running, idle, so that each check after it costs a process in it and not
// a container's making, start and removal. It goes with the volume
// (removeVolume).
func checkerName(vol string) string { return vol + "-check" }

// removeVolume removes a volume and its checker (volumelayer.go), which
// would hold it.
func (e *engine) removeVolume(ctx context.Context, name string) error {
	if name == "" {
		return nil
	}
	e.forceRemove(ctx, checkerName(name))
	cctx, cancel := short(ctx)
	defer cancel()
	if _, err := e.c.VolumeRemove(cctx, name, client.VolumeRemoveOptions{Force: true}); err != nil && !errors.Is(wrap(err, ""), providers.ErrNotFound) {
		return wrap(err, "remove the volume "+name)
	}
	return nil
}

// inspect reads a container; ok is false when there is none of that name.
func (e *engine) inspect(ctx context.Context, name string) (container.InspectResponse, bool, error) {
	cctx, cancel := short(ctx)
	defer cancel()
	r, err := e.c.ContainerInspect(cctx, name, client.ContainerInspectOptions{})
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
func (e *engine) mustInspect(ctx context.Context, g providers.Guest) (container.InspectResponse, error) {
	c, ok, err := e.inspect(ctx, g.Ref)
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

// removeContainer removes a container, the box volume it names and the
// file of its last take's record; an absent one is already removed.
func (e *engine) removeContainer(ctx context.Context, name string) error {
	c, ok, err := e.inspect(ctx, name)
	if err != nil || !ok {
		return err
	}
	cctx, cancel := short(ctx)
	defer cancel()
	if _, err := e.c.ContainerRemove(cctx, name, client.ContainerRemoveOptions{Force: true}); err != nil && !errors.Is(wrap(err, ""), providers.ErrNotFound) {
		return wrap(err, "remove the container "+name)
	}
	changerecord.RemoveRecord(e.cfg.StateDir, c.ID)
	return e.removeVolume(ctx, volumeOf(c))
}

func (e *engine) stopContainer(ctx context.Context, name string, seconds int) error {
	c, ok, err := e.inspect(ctx, name)
	if err != nil || !ok || !running(c) {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, DefaultRequestTimeout+timeSeconds(seconds))
	defer cancel()
	if c.State.Paused {
		if _, err := e.c.ContainerUnpause(cctx, name, client.ContainerUnpauseOptions{}); err != nil {
			return wrap(err, "unpause "+name)
		}
	}
	_, err = e.c.ContainerStop(cctx, name, client.ContainerStopOptions{Timeout: &seconds})
	return wrap(err, "stop "+name)
}

// removeUnusedVolumes removes the box's own volumes that no container uses.
func (e *engine) removeUnusedVolumes(ctx context.Context, box string) error {
	if box == "" {
		return nil
	}
	cctx, cancel := short(ctx)
	defer cancel()
	f := client.Filters{}.Add("label", labelInstall+"="+e.cfg.Install, labelBox+"="+box, labelRole+"="+roleBox).Add("dangling", "true")
	vols, err := e.c.VolumeList(cctx, client.VolumeListOptions{Filters: f})
	if err != nil {
		return wrap(err, "list the box's volumes")
	}
	for _, v := range vols.Items {
		if err := e.removeVolume(ctx, v.Name); err != nil {
			return err
		}
	}
	return nil
}

func (e *engine) rename(ctx context.Context, from, to string) error {
	cctx, cancel := short(ctx)
	defer cancel()
	_, err := e.c.ContainerRename(cctx, from, client.ContainerRenameOptions{NewName: to})
	return wrap(err, "rename "+from+" to "+to)
}

func timeSeconds(n int) time.Duration { return time.Duration(n) * time.Second }

// local reports whether the engine is on this host (a unix socket whose
// data root this process can read).
func (e *engine) local() bool {
	return strings.HasPrefix(e.c.DaemonHost(), "unix://")
}

// volumeInImage says whether a snapshot's image holds its volume.
func volumeInImage(img image.InspectResponse) bool {
	return img.Config != nil && img.Config.Labels[labelVolumeIn] != ""
}

// snapshotVolumeInImage says whether the snapshot's volume is a part of its
// image (a volume made for a box from that image is filled from it by the
// engine), not a copy of its own.
func (e *engine) snapshotVolumeInImage(ctx context.Context, snap string) (bool, error) {
	cctx, cancel := short(ctx)
	defer cancel()
	img, err := e.c.ImageInspect(cctx, snapImage(snap))
	if err != nil {
		return false, wrap(err, "read the snapshot's image")
	}
	return volumeInImage(img.InspectResponse), nil
}

// fillFromSnapshot fills a new, empty volume with the snapshot's: a copy of
// its volume copy, or nothing where its image holds the volume, which the
// engine copies into the empty volume when the box's container is made
// from that image.
func (b *Backend) fillFromSnapshot(ctx context.Context, snap, vol string) error {
	in, err := b.snapshotVolumeInImage(ctx, snap)
	if err != nil || in {
		return err
	}
	return b.copyVolume(ctx, snapVolume(snap), vol)
}

// snapshotWhole says whether both parts of a snapshot exist.
func (e *engine) snapshotWhole(ctx context.Context, snap string) error {
	cctx, cancel := short(ctx)
	defer cancel()
	img, err := e.c.ImageInspect(cctx, snapImage(snap))
	if err != nil {
		return wrap(err, "read the snapshot's image")
	}
	if volumeInImage(img.InspectResponse) {
		return nil
	}
	if _, err := e.c.VolumeInspect(cctx, snapVolume(snap), client.VolumeInspectOptions{}); err != nil {
		return wrap(err, "read the snapshot's volume")
	}
	return nil
}

// forceRemove removes a container by its ID, running or not, even after ctx
// ends; one already gone is removed.
func (e *engine) forceRemove(ctx context.Context, id string) {
	rctx, cancel := short(context.WithoutCancel(ctx))
	defer cancel()
	_, _ = e.c.ContainerRemove(rctx, id, client.ContainerRemoveOptions{Force: true})
}
