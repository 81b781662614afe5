package docker

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/image"
	"github.com/moby/moby/client"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/docker/boxfiles"
	"github.com/boxsnap/boxsnap/providers/docker/moves"
)

// The Backend moves snapshots between installs as archives and makes the
// scrubbed copy a share code hands out through its part moves.Moves,
// which reaches the backend's images, labels, look containers and loads
// through moveEngine; its part boxfiles.Files reads and writes the files
// of snapshots and boxes through filesEngine.
var _ providers.Exporter = (*Backend)(nil)

// moveEngine answers moves.Engine from the backend.
type moveEngine struct{ b *Backend }

var _ moves.Engine = moveEngine{}

func (m moveEngine) Client() *client.Client { return m.b.c }

func (m moveEngine) VolumePath() string { return m.b.cfg.VolumePath }

func (m moveEngine) SnapImage(snap string) string { return snapImage(snap) }

// SnapshotImage reads a whole snapshot's image.
func (m moveEngine) SnapshotImage(ctx context.Context, snap string) (image.InspectResponse, error) {
	if err := m.b.snapshotWhole(ctx, snap); err != nil {
		return image.InspectResponse{}, err
	}
	cctx, cancel := short(ctx)
	defer cancel()
	img, err := m.b.c.ImageInspect(cctx, snapImage(snap))
	if err != nil {
		return image.InspectResponse{}, wrap(err, "read the snapshot's image")
	}
	if img.Config == nil || len(img.RootFS.Layers) == 0 {
		return image.InspectResponse{}, fmt.Errorf("the snapshot %s's image has no config or no layers", snap)
	}
	return img.InspectResponse, nil
}

// Describe reads a snapshot image's labels.
func (m moveEngine) Describe(img image.InspectResponse) moves.Described {
	var d moves.Described
	if img.Config == nil {
		return d
	}
	l := img.Config.Labels
	d.Snapshot, d.VolumeIn = l[labelSnapshot], l[labelVolumeIn]
	d.ResetVersion, _ = strconv.Atoi(l[labelReset])
	if t, err := time.Parse(time.RFC3339Nano, l[labelTakenAt]); err == nil {
		d.TakenAt = t
	}
	return d
}

// Labels are a snapshot image's labels, as a take writes them, of this
// install and the box group.
func (m moveEngine) Labels(group string, d moves.Described) map[string]string {
	l := map[string]string{labelInstall: m.b.cfg.Install, labelBox: group, labelSnapshot: d.Snapshot, labelRole: roleSnapshot,
		labelVolume: "", labelTakenAt: d.TakenAt.UTC().Format(time.RFC3339Nano), labelReset: strconv.Itoa(d.ResetVersion)}
	if d.VolumeIn != "" {
		l[labelVolumeIn] = d.VolumeIn
	}
	return l
}

func (m moveEngine) LookAt(ctx context.Context, snap string) (string, func(), error) {
	return m.b.LookAt(ctx, snap)
}

// Walk streams a look container's files from its root, leaving out the
// files the engine writes in every container.
func (m moveEngine) Walk(ctx context.Context, look string, fn func(e moves.Entry, content io.Reader) error) error {
	return m.b.WalkLook(ctx, look, func(e boxfiles.Entry, content io.Reader) error {
		return fn(moves.Entry(e), content)
	})
}

// Load loads a docker-archive tar, a full data root said as such.
func (m moveEngine) Load(ctx context.Context, r io.Reader, what string) error {
	res, err := m.b.c.ImageLoad(ctx, r, client.ImageLoadWithQuiet(true))
	if err != nil {
		return m.b.roomWords(ctx, wrap(err, "load "+what))
	}
	defer func() { _ = res.Close() }()
	return loadErrors(res)
}

func (m moveEngine) Guest(group string) providers.Guest {
	return providers.Guest{Backend: m.b.cfg.ID, Kind: KindLinux, Host: m.b.host(), Ref: boxName(group)}
}

// Room reads the data root's room where the engine is on this host.
func (m moveEngine) Room(ctx context.Context) (providers.Storage, error) {
	st, _, err := m.b.room(ctx, "")
	return st, err
}

// LoadsOnLayers is what the backend's layered takes ask of the engine.
func (m moveEngine) LoadsOnLayers(ctx context.Context) bool {
	return incremental{m.b}.loadsOnLayers(ctx)
}

var _ boxfiles.Engine = filesEngine{}

// filesEngine is the engine as package boxfiles asks it: the snapshots'
// images, volume copies and look containers' labels as this backend makes
// them.
type filesEngine struct{ *engine }

func (e filesEngine) VolumePath() string          { return e.cfg.VolumePath }
func (filesEngine) SnapImage(snap string) string  { return snapImage(snap) }
func (filesEngine) SnapVolume(snap string) string { return snapVolume(snap) }
func (filesEngine) Wrap(err error, what string) error {
	return wrap(err, what)
}

func (e filesEngine) LookLabels(snap string) map[string]string {
	return map[string]string{labelInstall: e.cfg.Install, labelRole: roleLook, labelSnapshot: snap}
}

func (e filesEngine) SnapshotWhole(ctx context.Context, snap string) error {
	return e.snapshotWhole(ctx, snap)
}

func (e filesEngine) SnapshotVolumeInImage(ctx context.Context, snap string) (bool, error) {
	return e.snapshotVolumeInImage(ctx, snap)
}

func (e filesEngine) MustInspect(ctx context.Context, g providers.Guest) (container.InspectResponse, error) {
	return e.mustInspect(ctx, g)
}
