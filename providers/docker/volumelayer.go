package docker

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/providers/docker/changerecord"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"
)

// layerFile is one layer written to a file of the host, with its diff ID.
type layerFile struct {
	file    *tempFile
	diffID  string
	entries int
}

// tempFile is a layer's file and the function that removes it.
type tempFile struct {
	f       *os.File
	cleanup func()
}

// volumeLayers writes a box's volume as layers under VolumePath for the
// snapshot's image, in two passes, so that the box is paused only for what
// it changed during the first: a copier container, running, with the box's
// volume read-only at /from, first (the box running) scans the volume and
// writes what changed since the parent's take (or, with none, the whole
// volume over an opaque whiteout of the folder), then (the box paused)
// scans again and writes only the paths whose stat differs from the first
// scan's, and a whiteout for each path gone. A path's change time moves on
// every write and cannot be set back, so a path whose stat is the same was
// written whole before.
type volumeLayers struct {
	b    *Backend
	id   string // the copier
	at   string // the volume's folder in the image, without its leading /
	scan changerecord.VolumeState
	// since is the stamp taken before the first scan
	// (changerecord.RacyVolume): a path whose change time falls after it
	// is written again in the pause.
	since time.Time
	// armed is the second scan, started before the pause (armed.go).
	armed  *armedScan
	layers []layerFile
	read   int64 // the bytes of files read
	// unmark ends the take's mark where the copier is the volume's
	// checker (hoststate's marks), which stays; nil where the copier is the
	// take's own, removed at its end.
	unmark func()
}

// startVolumeLayers marks the take and answers the volume's checker as its
// copier, or where it cannot be marked makes and starts a copier of its
// own, labelled with the snapshot (so a take cut short is known by it, and
// its delete removes it).
func (b incremental) startVolumeLayers(ctx context.Context, snap, vol string) (*volumeLayers, error) {
	if unmark, ok := b.state().MarkTake(snap); ok {
		if err := b.ensureChecker(ctx, vol); err != nil {
			unmark()
			return nil, err
		}
		return &volumeLayers{b: b.Backend, id: checkerName(vol), at: strings.Trim(b.cfg.VolumePath, "/"), unmark: unmark}, nil
	}
	id, err := b.createCopier(ctx, snap, idleCmd, []mount.Mount{{Type: mount.TypeVolume, Source: vol, Target: "/from", ReadOnly: true}})
	if err != nil {
		return nil, err
	}
	cctx, cancel := short(ctx)
	defer cancel()
	if _, err := b.c.ContainerStart(cctx, id, client.ContainerStartOptions{}); err != nil {
		b.removeCopier(ctx, id)
		return nil, wrap(err, "start the copier")
	}
	return &volumeLayers{b: b.Backend, id: id, at: strings.Trim(b.cfg.VolumePath, "/")}, nil
}

// close removes the take's own copier (or ends its mark) and the layers'
// files, even after ctx ends.
func (v *volumeLayers) close(ctx context.Context) {
	v.armed.close()
	if v.unmark != nil {
		v.unmark()
	} else {
		v.b.removeCopier(ctx, v.id)
	}
	for _, l := range v.layers {
		l.file.cleanup()
	}
}

// scanNow scans the volume in the copier.
func (v *volumeLayers) scanNow(ctx context.Context) (changerecord.VolumeState, error) {
	out, err := (&volumeTake{b: v.b, id: v.id}).exec(ctx, changerecord.ScanScript("/from"))
	if err != nil {
		return nil, err
	}
	st, _, err := changerecord.ParseScan(out)
	return st, err
}

// first scans the volume and writes its layer, the box running: what
// changed since prev, the parent take's scan, or with none the whole
// volume.
func (v *volumeLayers) first(ctx context.Context, prev changerecord.VolumeState) error {
	now, err := v.scanNow(ctx)
	if err != nil {
		return err
	}
	if prev == nil {
		err = v.writeWhole(ctx)
	} else {
		err = v.writeDelta(ctx, prev, now, nil)
	}
	v.scan = now
	return err
}

// second scans the volume again, the box paused, writes the layer of what
// changed since the first scan, and answers the scan (the take's record)
// and the bytes of the volume's files.
func (v *volumeLayers) second(ctx context.Context) (changerecord.VolumeState, int64, error) {
	var now changerecord.VolumeState
	var err error
	if a := v.armed; a != nil {
		v.armed = nil
		var out string
		if out, err = a.fire(ctx, v); err == nil {
			now, _, err = changerecord.ParseScan(out)
		}
	} else {
		now, err = v.scanNow(ctx)
	}
	if err != nil {
		return nil, 0, err
	}
	if err := v.writeDelta(ctx, v.scan, now, changerecord.RacyVolume(v.scan, v.since)); err != nil {
		return nil, 0, err
	}
	return now, fileBytes(now), nil
}

// layerWriter is a layer being written: its tar, hashed as it goes.
type layerWriter struct {
	tf      *tempFile
	tw      *tar.Writer
	h       interface{ Sum([]byte) []byte }
	entries int
}

func newLayerWriter(dir string) (*layerWriter, error) {
	f, cleanup, err := tempLayer(dir)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	return &layerWriter{tf: &tempFile{f: f, cleanup: cleanup}, tw: tar.NewWriter(io.MultiWriter(f, h)), h: h}, nil
}

// done closes the layer and keeps it, unless it holds nothing.
func (v *volumeLayers) done(w *layerWriter) error {
	if err := w.tw.Close(); err != nil {
		w.tf.cleanup()
		return fmt.Errorf("write the volume's layer: %w", err)
	}
	if w.entries == 0 {
		w.tf.cleanup()
		return nil
	}
	v.layers = append(v.layers, layerFile{file: w.tf, diffID: "sha256:" + hex.EncodeToString(w.h.Sum(nil)), entries: w.entries})
	return nil
}

// writeWhole writes the whole volume, read through the engine's archive
// endpoint, under the volume's folder, which an opaque whiteout empties of
// what the parent image held there.
func (v *volumeLayers) writeWhole(ctx context.Context) error {
	w, err := newLayerWriter(v.b.state().LayerDir())
	if err != nil {
		return err
	}
	res, err := v.b.c.CopyFromContainer(ctx, v.id, client.CopyFromContainerOptions{SourcePath: "/from"})
	if err != nil {
		w.tf.cleanup()
		return wrap(err, "read the volume")
	}
	defer func() { _ = res.Content.Close() }()
	tr := tar.NewReader(res.Content)
	rename := func(name string) string {
		return v.at + strings.TrimPrefix(strings.TrimSuffix(name, "/"), "from")
	}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			w.tf.cleanup()
			return fmt.Errorf("read the volume: %w", err)
		}
		root := strings.TrimSuffix(hdr.Name, "/") == "from"
		hdr.Name = rename(hdr.Name)
		if hdr.Typeflag == tar.TypeDir {
			hdr.Name += "/"
		}
		if hdr.Typeflag == tar.TypeLink {
			hdr.Linkname = rename(hdr.Linkname)
		}
		if err := w.tw.WriteHeader(hdr); err != nil {
			w.tf.cleanup()
			return fmt.Errorf("write the volume's layer: %w", err)
		}
		w.entries++
		if root {
			// What the parent image held in the folder is hidden.
			if err := w.tw.WriteHeader(&tar.Header{Name: v.at + "/.wh..wh..opq", Typeflag: tar.TypeReg, Mode: 0o600}); err != nil {
				w.tf.cleanup()
				return fmt.Errorf("write the volume's layer: %w", err)
			}
		}
		if hdr.Typeflag == tar.TypeReg {
			n, err := io.Copy(w.tw, tr)
			v.read += n
			if err != nil {
				w.tf.cleanup()
				return fmt.Errorf("copy the volume into its layer: %w", err)
			}
		}
	}
	return v.done(w)
}

// writeDelta writes the paths new or changed between two scans, those of
// again that are there now, and a whiteout for each path gone.
func (v *volumeLayers) writeDelta(ctx context.Context, old, now changerecord.VolumeState, again map[string]bool) error {
	w, err := newLayerWriter(v.b.state().LayerDir())
	if err != nil {
		return err
	}
	gone := map[string]bool{}
	var todo []string
	for p, st := range now {
		if o, ok := old[p]; !ok || o != st || again[p] {
			todo = append(todo, p)
		}
	}
	for p := range old {
		if _, ok := now[p]; !ok {
			gone["/"+strings.TrimPrefix(p, "./")] = true
			todo = append(todo, p)
		}
	}
	for _, p := range slices.Sorted(slices.Values(todo)) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, "."), "/")
		abs := "/" + rel
		switch {
		case gone[abs] && underGone(abs, gone):
			continue // its folder's whiteout hides it
		case gone[abs]:
			dir, base := path.Split(rel)
			err = w.tw.WriteHeader(&tar.Header{Name: v.at + "/" + dir + ".wh." + base, Typeflag: tar.TypeReg, Mode: 0o600})
		default:
			err = v.copyPath(ctx, w.tw, rel, now[p])
		}
		if err != nil {
			w.tf.cleanup()
			return err
		}
		w.entries++
	}
	return v.done(w)
}

// copyPath writes one path of the volume into the layer: a folder as its
// header alone, made from the scan's line (its own changed paths come each
// on its own), anything else as the engine's archive endpoint reads it.
func (v *volumeLayers) copyPath(ctx context.Context, tw *tar.Writer, rel, stat string) error {
	name := v.at
	if rel != "" {
		name += "/" + rel
	}
	if hdr, ok := folderHeader(stat); ok {
		hdr.Name = name + "/"
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("write %s into the volume's layer: %w", rel, err)
		}
		return nil
	}
	res, err := v.b.c.CopyFromContainer(ctx, v.id, client.CopyFromContainerOptions{SourcePath: "/from/" + rel})
	if err != nil {
		return wrap(err, "read "+rel+" in the volume")
	}
	defer func() { _ = res.Content.Close() }()
	tr := tar.NewReader(res.Content)
	hdr, err := tr.Next()
	if err != nil {
		return fmt.Errorf("read %s in the volume: %w", rel, err)
	}
	hdr.Name = name
	if hdr.Typeflag == tar.TypeDir {
		hdr.Name += "/"
	}
	if hdr.Typeflag != tar.TypeReg {
		hdr.Size = 0
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("write %s into the volume's layer: %w", rel, err)
	}
	if hdr.Typeflag != tar.TypeReg {
		return nil
	}
	n, err := io.Copy(tw, tr)
	v.read += n
	if err != nil {
		return fmt.Errorf("copy %s into the volume's layer: %w", rel, err)
	}
	return nil
}

// folderHeader makes a folder's tar header from its scan line (mode in hex,
// size, inode, owner, group, modification time, change time), or says the
// line is not a folder's.
func folderHeader(stat string) (*tar.Header, bool) {
	f := strings.Split(stat, "|")
	if len(f) < 7 {
		return nil, false
	}
	mode, err := strconv.ParseUint(f[0], 16, 32)
	if err != nil || mode&0o170000 != 0o040000 {
		return nil, false
	}
	uid, err1 := strconv.Atoi(f[3])
	gid, err2 := strconv.Atoi(f[4])
	mtime, err3 := time.Parse(changerecord.ScanTimeLayout, f[5])
	if err1 != nil || err2 != nil || err3 != nil {
		return nil, false
	}
	return &tar.Header{Typeflag: tar.TypeDir, Mode: int64(mode & 0o7777), Uid: uid, Gid: gid, ModTime: mtime, Format: tar.FormatPAX}, true
}

// stamp writes a file in the copier and answers its modification time: the
// kernel's coarse time now, as the box's files' times are written. Where
// the box runs on this process's own kernel (sameKernel) the clock is read
// here instead: the coarse time lags the fine one by a tick at most, less
// than LocalSlack, so a write after now is never stamped before it.
func (v *volumeLayers) stamp(ctx context.Context, sameKernel bool) (time.Time, error) {
	if sameKernel {
		return time.Now().Add(-changerecord.LocalSlack), nil
	}
	out, err := (&volumeTake{b: v.b, id: v.id}).exec(ctx, "/bin/busybox touch /tmp/stamp && /bin/busybox stat -c %y /tmp/stamp")
	if err != nil {
		return time.Time{}, fmt.Errorf("read the engine's time: %w", err)
	}
	t, err := time.Parse(changerecord.ScanTimeLayout, strings.TrimSpace(out))
	if err != nil {
		return time.Time{}, fmt.Errorf("read the engine's time: %w", err)
	}
	return t.Add(-changerecord.RacySlack), nil
}

// armedScan is the volume's second scan, its process made and started in
// the copier before the pause and waiting for a line on its input, so that
// the pause holds the scan alone and not the making of a process.
type armedScan struct {
	id  string
	att client.ExecAttachResult
}

// arm starts the second scan, waiting.
func (v *volumeLayers) arm(ctx context.Context) error {
	cmd := []string{"/bin/busybox", "sh", "-c", "read go && " + changerecord.ScanScript("/from")}
	ex, err := v.b.c.ExecCreate(ctx, v.id, client.ExecCreateOptions{Cmd: cmd, AttachStdin: true, AttachStdout: true, AttachStderr: true})
	if err != nil {
		return wrap(err, "start the volume's scan in the copier")
	}
	att, err := v.b.c.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		return wrap(err, "start the volume's scan in the copier")
	}
	v.armed = &armedScan{id: ex.ID, att: att}
	return nil
}

// close ends a scan never fired (its process ends with its input).
func (a *armedScan) close() {
	if a != nil {
		a.att.Close()
	}
}

// fire lets the armed scan run and answers its output.
func (a *armedScan) fire(ctx context.Context, v *volumeLayers) (string, error) {
	defer a.att.Close()
	if _, err := a.att.Conn.Write([]byte("go\n")); err != nil {
		return "", fmt.Errorf("run the volume's scan in the copier: %w", err)
	}
	return execOutput(ctx, v.b, a.id, a.att.Reader)
}

// scanChecked scans a box's volume in its checker, made (again, where the
// engine lost it or stopped it) when the scan cannot run in it.
func (b incremental) scanChecked(ctx context.Context, vol string) (changerecord.VolumeState, error) {
	out, err := (&volumeTake{b: b.Backend, id: checkerName(vol)}).exec(ctx, changerecord.ScanScript("/from"))
	if err != nil {
		if err := b.startChecker(ctx, vol); err != nil {
			return nil, err
		}
		if out, err = (&volumeTake{b: b.Backend, id: checkerName(vol)}).exec(ctx, changerecord.ScanScript("/from")); err != nil {
			return nil, fmt.Errorf("scan the volume: %w", err)
		}
	}
	st, _, err := changerecord.ParseScan(out)
	return st, err
}

// startChecker makes and starts a volume's checker, in place of any left,
// from the copier image its caller made (ensureCopier).
func (b incremental) startChecker(ctx context.Context, vol string) error {
	b.mu.Lock()
	img := b.copier
	b.mu.Unlock()
	if img == "" {
		return errors.New("the volume's checker: the copier image is not made yet")
	}
	name := checkerName(vol)
	b.forceRemove(ctx, name)
	cctx, cancel := short(ctx)
	defer cancel()
	res, err := b.c.ContainerCreate(cctx, client.ContainerCreateOptions{Name: name, Image: img,
		Config: &container.Config{Cmd: idleCmd, Labels: map[string]string{labelInstall: b.cfg.Install, labelRole: roleCopier, labelVolume: vol}},
		HostConfig: &container.HostConfig{Mounts: []mount.Mount{{Type: mount.TypeVolume, Source: vol, Target: "/from", ReadOnly: true}},
			NetworkMode: "none", SecurityOpt: []string{"no-new-privileges"}}})
	if err != nil {
		return wrap(err, "make the volume's checker")
	}
	if _, err := b.c.ContainerStart(cctx, res.ID, client.ContainerStartOptions{}); err != nil {
		b.forceRemove(ctx, res.ID)
		return wrap(err, "start the volume's checker")
	}
	return nil
}

// ensureChecker starts the volume's checker where it is not running.
func (b incremental) ensureChecker(ctx context.Context, vol string) error {
	c, ok, err := b.inspect(ctx, checkerName(vol))
	if err != nil {
		return err
	}
	if ok && running(c) && !c.State.Paused {
		return nil
	}
	return b.startChecker(ctx, vol)
}
