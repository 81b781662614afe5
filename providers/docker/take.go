package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/image"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/docker/changerecord"
)

// copierImage is the image the volume copies run in, made by the backend
// from a static busybox (never pulled from a registry).
const copierImage = "boxsnap/copier:1"

// fullBelow is the free room under which a failed copy is put down to a
// full data root.
const fullBelow = 4 << 20

// Snapshot takes one snapshot: the box's volume is written as layers of the
// snapshot's image under the volume's folder (where the engine cannot load
// an image on its layers, copied into a volume of the snapshot's own), the
// container paused, what changed in the volume since written again, and the
// container committed as an image (or, after a take this process recorded,
// only what changed since written as a layer on that take's image), then
// unpaused, and only then is the image tagged with the snapshot's name. The tag is the mark of a whole snapshot: one without it is
// incomplete. Memory is not captured.
//
// A take a killed worker cut short before its tag is known by its copier's
// container or by the box's pause (HeldSnapshots lists it as neither a
// snapshot nor an orphan) and is taken again: what it made goes first, and
// a paused box's pause, where it is the killed take's (hoststate), is taken
// as this take's own, which the new try ends (boxsnap leaves a box running
// after a take); a box a person paused stays paused.
func (b *Backend) Snapshot(ctx context.Context, g providers.Guest, take providers.SnapshotTake, _ providers.Recorder) (providers.SnapshotTaken, error) {
	if take.Memory {
		return providers.SnapshotTaken{}, &providers.RefusedError{Why: "a Docker box's snapshot holds its disk only: its container's memory is not captured"}
	}
	snap := take.Label.Snapshot
	c, err := b.mustInspect(ctx, g)
	if err != nil {
		return providers.SnapshotTaken{}, err
	}
	vol := volumeOf(c)
	if vol == "" {
		return providers.SnapshotTaken{}, fmt.Errorf("the container %s has no volume of boxsnap's", g.Ref)
	}
	if err := b.ensureCopier(ctx); err != nil {
		return providers.SnapshotTaken{}, err
	}
	// A pause a worker killed mid-take left is this take's to end, and
	// what that try made goes first.
	ownPause := running(c) && c.State.Paused && b.records.adopted.Adopt(b.state(), c.ID)
	if err := b.deleteParts(ctx, snap); err != nil {
		return providers.SnapshotTaken{}, err
	}
	reset, _ := strconv.Atoi(c.Config.Labels[labelReset])
	now := time.Now().UTC()
	labels := map[string]string{labelInstall: take.Label.Install, labelBox: take.Label.Box, labelSnapshot: snap, labelRole: roleSnapshot,
		labelVolume: snapVolume(snap), labelTakenAt: now.Format(time.RFC3339Nano), labelReset: strconv.Itoa(reset)}
	taken, err := b.capture(ctx, g.Ref, vol, snap, labels, ownPause)
	if err != nil {
		// Nothing half-made is left where the engine lets boxsnap remove it;
		// where it does not, the snapshot is incomplete and its delete
		// finishes the clean-up.
		if cerr := b.deleteParts(context.WithoutCancel(ctx), snap); cerr != nil {
			return providers.SnapshotTaken{}, fmt.Errorf("%w: %w; and its parts could not be removed: %w", providers.ErrIncomplete, err, cerr)
		}
		return providers.SnapshotTaken{}, err
	}
	taken.CapturedAt = now
	taken.ResetVersion = reset
	if take.Label.KeptUntil != nil {
		if err := b.SetKeptUntil(ctx, providers.SnapshotRef{Ref: snap}, take.Label.KeptUntil); err != nil {
			return providers.SnapshotTaken{}, err
		}
	}
	b.hook("take:tagged")
	return taken, nil
}

// capture, on an engine that loads images on layers it has, writes the
// volume into the snapshot's image (captureInImage). Elsewhere it pauses
// the container, copies its volume and records its layer
// and its volume's stats, writes the layer of what changed since the box's
// last take (or, with no record of it, commits the container whole),
// unpauses it whatever happened, and then tags the image (loads it, for a
// layered take).
func (b *Backend) capture(ctx context.Context, name, vol, snap string, labels map[string]string, ownPause bool) (providers.SnapshotTaken, error) {
	c, ok, err := b.inspect(ctx, name)
	if err != nil {
		return providers.SnapshotTaken{}, err
	}
	if !ok {
		return providers.SnapshotTaken{}, fmt.Errorf("the container %s: %w", name, providers.ErrNotFound)
	}
	if (incremental{b}).loadsOnLayers(ctx) {
		// A box that changed nothing since its last take is not paused.
		if taken, ok, err := (incremental{b}).takeUnchanged(ctx, c, snap, labels); ok || err != nil {
			return taken, err
		}
		return incremental{b}.captureInImage(ctx, c, name, vol, snap, labels, ownPause)
	}
	// Where the engine cannot load an image on layers it has, the
	// snapshot's volume is a copy of its own: that volume and the copier's
	// container are made, and the volume copied whole, before the pause:
	// inside it only what changed since is copied, and the container's
	// layer recorded and written.
	labels[labelVolumeIn] = ""
	cctx, cancel := short(ctx)
	_, err = b.c.VolumeCreate(cctx, client.VolumeCreateOptions{Name: snapVolume(snap), Labels: labels})
	cancel()
	if err != nil {
		return providers.SnapshotTaken{}, wrap(err, "create the snapshot's volume")
	}
	vt, err := incremental{b}.startVolumeTake(ctx, snap, vol)
	if err != nil {
		return providers.SnapshotTaken{}, err
	}
	defer vt.close(ctx)
	if err := vt.first(ctx); err != nil {
		return providers.SnapshotTaken{}, fmt.Errorf("copy the volume: %w", err)
	}
	lt := incremental{b}.layeredOn(ctx, c.ID)
	defer lt.close()
	b.hook("take:prepared")
	p, err := b.pauseBox(ctx, name, c, ownPause)
	if err != nil {
		return providers.SnapshotTaken{}, err
	}
	defer func() { _ = p.end() }()
	b.hook("take:paused")
	rec, commit, volBytes, err := incremental{b}.whilePaused(ctx, c.ID, snap, vt, labels, lt)
	if err != nil {
		return providers.SnapshotTaken{}, err
	}
	if err := p.end(); err != nil {
		return providers.SnapshotTaken{}, err
	}
	b.hook("take:unpaused")
	img, err := incremental{b}.imageOfTake(ctx, snap, commit, labels, lt)
	if err != nil {
		return providers.SnapshotTaken{}, err
	}
	rec.Image, rec.Layers = img.ID, len(img.RootFS.Layers)
	incremental{b}.keepRecord(c.ID, rec)
	taken := providers.SnapshotTaken{Ref: snap, Storage: "docker", Holds: providers.HoldsDisk, Paused: p.took}
	if img.Size > 0 {
		taken.Size = &providers.Size{Bytes: img.Size + volBytes, Meaning: "whole"}
	}
	return taken, nil
}

// whilePaused copies what changed in the volume since its first pass and
// records its stats and the container's layer, then writes the layered
// take's layer or commits the container; it answers the record, the
// commit's image (none for a layered take) and the bytes of the volume's
// files.
//
// The layer is read (and a layered take's layer written) while the volume's
// second pass runs: the two read different things, and the pause lasts as
// long as the longer.
func (b incremental) whilePaused(ctx context.Context, id, snap string, vt *volumeTake, labels map[string]string, lt *layeredTake) (*changerecord.ChangeRecord, string, int64, error) {
	var layer changerecord.LayerState
	layerDone := make(chan error, 1)
	go func() {
		var err error
		if layer, err = b.readLayer(ctx, id); err == nil && lt != nil {
			err = lt.write(ctx, layer)
		}
		layerDone <- err
	}()
	vol, volBytes, verr := vt.second(ctx)
	lerr := <-layerDone
	if verr != nil {
		return nil, "", 0, fmt.Errorf("copy the volume: %w", verr)
	}
	if lerr != nil {
		return nil, "", 0, lerr
	}
	b.hook("take:copied")
	rec := &changerecord.ChangeRecord{Snap: snap, Layer: layer, Volume: vol}
	commit := ""
	if lt == nil {
		res, err := b.c.ContainerCommit(ctx, id, client.ContainerCommitOptions{NoPause: true,
			Comment: "boxsnap snapshot " + snap, Config: &container.Config{Labels: labels}})
		if err != nil {
			return nil, "", 0, wrap(err, "commit "+id)
		}
		commit = res.ID
	}
	b.hook("take:committed")
	return rec, commit, volBytes, nil
}

// imageOfTake tags the commit as the snapshot's image, or loads the
// layered take's, and reads it.
func (b incremental) imageOfTake(ctx context.Context, snap, commit string, labels map[string]string, lt *layeredTake) (image.InspectResponse, error) {
	if lt != nil {
		if _, err := lt.load(ctx, snap, labels); err != nil {
			return image.InspectResponse{}, err
		}
	} else {
		cctx, cancel := short(ctx)
		defer cancel()
		if _, err := b.c.ImageTag(cctx, client.ImageTagOptions{Source: commit, Target: snapImage(snap)}); err != nil {
			return image.InspectResponse{}, wrap(err, "tag the snapshot's image")
		}
	}
	cctx, cancel := short(ctx)
	defer cancel()
	img, err := b.c.ImageInspect(cctx, snapImage(snap))
	return img.InspectResponse, wrap(err, "read the snapshot's image")
}

// ensureCopier makes the copier image once: a static busybox, imported.
func (b *Backend) ensureCopier(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.copier != "" {
		return nil
	}
	cctx, cancel := short(ctx)
	defer cancel()
	if img, err := b.c.ImageInspect(cctx, copierImage); err == nil {
		b.copier = img.ID
		return nil
	} else if w := wrap(err, "read the copier image"); !errors.Is(w, providers.ErrNotFound) {
		return w
	}
	tarball, err := BusyboxRoot(b.cfg.CopierBinary, nil)
	if err != nil {
		return fmt.Errorf("make the copier image: %w (Debian: apt-get install busybox-static)", err)
	}
	r, err := b.c.ImageImport(cctx, client.ImageImportSource{Source: bytes.NewReader(tarball), SourceName: "-"}, copierImage,
		client.ImageImportOptions{Changes: []string{"LABEL " + labelRole + "=" + roleCopier}})
	if err != nil {
		return wrap(err, "import the copier image")
	}
	_, _ = io.Copy(io.Discard, r)
	_ = r.Close()
	img, err := b.c.ImageInspect(cctx, copierImage)
	if err != nil {
		return wrap(err, "read the copier image")
	}
	b.copier = img.ID
	return nil
}

// IdentityReset is the identity reset of the images boxsnap builds (for
// Docker, the value is BOXSNAP_IDENTITY): at each start it compares the value
// with the marker the box kept; where they differ (a fork, or a first start)
// it makes the box's host ID new and writes the marker, so a same-box swap
// keeps the host ID and a fork gets its own. Then it runs the box's command
// (sleeps).
const IdentityReset = `#!/bin/sh
dir=/var/lib/boxsnap
if [ "$(cat $dir/identity 2>/dev/null)" != "$BOXSNAP_IDENTITY" ]; then
  mkdir -p $dir && head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' > $dir/host-id && echo "$BOXSNAP_IDENTITY" > $dir/identity
fi
exec sleep 2147483647
`

// IdentityResetVersion is IdentityReset's version, on its images' label.
const IdentityResetVersion = 1

// BusyboxRoot is a root file system holding a static busybox, links to it
// for the tools the tests and the copier use, IdentityReset at
// /bin/boxsnap-identity, and files (path → content), as a tar for `docker
// import`.
func BusyboxRoot(busybox string, files map[string]string) ([]byte, error) {
	bin, err := os.ReadFile(busybox)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := []string{"bin/", "tmp/", "etc/", "var/", "var/lib/", "var/lib/docker/", "var/lib/boxsnap/"}
	for _, d := range dirs {
		mode := int64(0o755)
		if d == "tmp/" {
			mode = 0o1777
		}
		if err := tw.WriteHeader(&tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: mode}); err != nil {
			return nil, err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Name: "bin/busybox", Mode: 0o755, Size: int64(len(bin))}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, err
	}
	for _, l := range []string{"sh", "ls", "cat", "cp", "du", "df", "sleep", "echo", "mkdir", "rm", "dd", "sync", "id", "env", "head", "tail", "true", "od", "tr"} {
		if err := tw.WriteHeader(&tar.Header{Name: "bin/" + l, Typeflag: tar.TypeSymlink, Linkname: "busybox", Mode: 0o777}); err != nil {
			return nil, err
		}
	}
	all := map[string]string{"/bin/boxsnap-identity": IdentityReset}
	maps.Copy(all, files)
	for _, p := range slices.Sorted(maps.Keys(all)) {
		mode := int64(0o644)
		if strings.HasPrefix(p, "/bin/") {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(p, "/"), Mode: mode, Size: int64(len(all[p]))}); err != nil {
			return nil, err
		}
		if _, err := tw.Write([]byte(all[p])); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ImportBusyboxImage makes an image named ref on the engine from a static
// busybox and files, whose command is IdentityReset, labelled with its
// version: boxsnap's own images for tests and the demo, never pulled.
func (b *Backend) ImportBusyboxImage(ctx context.Context, ref, busybox string, files map[string]string) error {
	root, err := BusyboxRoot(busybox, files)
	if err != nil {
		return fmt.Errorf("%w (Debian: apt-get install busybox-static)", err)
	}
	r, err := b.c.ImageImport(ctx, client.ImageImportSource{Source: bytes.NewReader(root), SourceName: "-"}, ref,
		client.ImageImportOptions{Changes: []string{`CMD ["/bin/boxsnap-identity"]`, "ENV PATH=/bin",
			fmt.Sprintf("LABEL %s=%d", labelReset, IdentityResetVersion)}})
	if err != nil {
		return wrap(err, "import the image "+ref)
	}
	_, _ = io.Copy(io.Discard, r)
	return r.Close()
}

// copyCmd copies /from into /to (`cp -a`, as a person would with `docker
// run --rm -v`) and says the copy's size in KiB.
var copyCmd = []string{"/bin/busybox", "sh", "-c", "/bin/busybox cp -a /from/. /to/ && /bin/busybox du -sk /to"}

func copyMounts(from, to string) []mount.Mount {
	return []mount.Mount{{Type: mount.TypeVolume, Source: from, Target: "/from", ReadOnly: true}, {Type: mount.TypeVolume, Source: to, Target: "/to"}}
}

// copyVolume copies one volume into another in a container of the copier
// image.
func (b *Backend) copyVolume(ctx context.Context, from, to string) error {
	id, err := b.createCopier(ctx, "", copyCmd, copyMounts(from, to))
	if err != nil {
		return err
	}
	defer b.removeCopier(ctx, id)
	return b.roomWords(ctx, b.runCopier(ctx, id))
}

// roomWords says a failed copy ran out of room where the data root is full:
// a full disk may leave no room for the copier's own output.
func (b *Backend) roomWords(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, providers.ErrNoRoom) || ctx.Err() != nil {
		return err
	}
	if st, _, rerr := b.room(ctx, ""); rerr == nil && st.PercentFull > 0 && st.FreeBytes < fullBelow {
		return fmt.Errorf("the Docker host's data root is full (%s free): %w (%w)", bytesWords(st.FreeBytes), providers.ErrNoRoom, err)
	}
	return err
}

// createCopier creates (does not start) a container of the copier image
// that runs cmd with mounts, labelled with the snapshot it copies for (so a
// take cut short is known by it, and its delete removes it).
func (b *Backend) createCopier(ctx context.Context, snap string, cmd []string, mounts []mount.Mount) (string, error) {
	if err := b.ensureCopier(ctx); err != nil {
		return "", err
	}
	labels := map[string]string{labelInstall: b.cfg.Install, labelRole: roleCopier}
	if snap != "" {
		labels[labelSnapshot] = snap
	}
	cctx, cancel := short(ctx)
	defer cancel()
	res, err := b.c.ContainerCreate(cctx, client.ContainerCreateOptions{Image: copierImage,
		Config:     &container.Config{Cmd: cmd, Labels: labels},
		HostConfig: &container.HostConfig{Mounts: mounts, NetworkMode: "none", SecurityOpt: []string{"no-new-privileges"}}})
	if err != nil {
		return "", wrap(err, "create the copier")
	}
	return res.ID, nil
}

// runCopier starts a copier's container and waits for it to end.
func (b *Backend) runCopier(ctx context.Context, id string) error {
	wait := b.c.ContainerWait(ctx, id, client.ContainerWaitOptions{Condition: container.WaitConditionNextExit})
	cctx, cancel := short(ctx)
	_, err := b.c.ContainerStart(cctx, id, client.ContainerStartOptions{})
	cancel()
	if err != nil {
		return wrap(err, "start the copier")
	}
	select {
	case r := <-wait.Result:
		if r.StatusCode != 0 {
			out := strings.TrimSpace(b.logs(ctx, id))
			err := fmt.Errorf("the copy ended with status %d: %s", r.StatusCode, out)
			if strings.Contains(out, "No space left on device") {
				return fmt.Errorf("the Docker host's data root is full: %w (%w)", providers.ErrNoRoom, err)
			}
			return err
		}
		return nil
	case err := <-wait.Error:
		return wrap(err, "wait for the copier")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// removeCopier removes a copier's container, even after ctx ends.
func (b *Backend) removeCopier(ctx context.Context, id string) {
	rctx, cancel := short(context.WithoutCancel(ctx))
	defer cancel()
	_, _ = b.c.ContainerRemove(rctx, id, client.ContainerRemoveOptions{Force: true})
}

// runOnce runs cmd in a copier's container with mounts and answers its
// output.
func (b *Backend) runOnce(ctx context.Context, cmd []string, mounts []mount.Mount) (string, error) {
	id, err := b.createCopier(ctx, "", cmd, mounts)
	if err != nil {
		return "", err
	}
	defer b.removeCopier(ctx, id)
	if err := b.runCopier(ctx, id); err != nil {
		return "", err
	}
	return b.logs(ctx, id), nil
}

// logs reads a stopped container's output (stdout and stderr, demultiplexed).
func (b *Backend) logs(ctx context.Context, id string) string {
	cctx, cancel := short(ctx)
	defer cancel()
	r, err := b.c.ContainerLogs(cctx, id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		return ""
	}
	defer func() { _ = r.Close() }()
	raw, _ := io.ReadAll(io.LimitReader(r, 1<<20))
	var out bytes.Buffer
	for len(raw) >= 8 {
		n := int(binary.BigEndian.Uint32(raw[4:8]))
		raw = raw[8:]
		if n > len(raw) {
			n = len(raw)
		}
		out.Write(raw[:n])
		raw = raw[n:]
	}
	return out.String()
}
