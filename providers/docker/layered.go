package docker

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/image"
	"github.com/moby/moby/client"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/docker/changerecord"
	"github.com/boxsnap/boxsnap/providers/docker/hoststate"
	"github.com/boxsnap/boxsnap/providers/docker/moves"
)

// incremental holds the parts of a take and of Changes that read what
// changed since the box's last take: the Backend's own methods are kept
// for what every take does.
type incremental struct{ *Backend }

// statWorkers is how many stats of a layer's paths are asked at once.
const statWorkers = 8

// readLayer reads the container's writable layer: the engine's list of its
// changes from its image, and the stat of each path that is there (with
// its change time, where the layer's folder is read here, hoststate.Uppers). A path
// that goes between the two reads is recorded as deleted (the box changes
// it now).
func (b incremental) readLayer(ctx context.Context, id string) (changerecord.LayerState, error) {
	res, err := b.c.ContainerDiff(ctx, id, client.ContainerDiffOptions{})
	if err != nil {
		return nil, wrap(err, "list the container's changes")
	}
	out := make(changerecord.LayerState, len(res.Changes))
	var todo []string
	for _, ch := range res.Changes {
		if ch.Kind == container.ChangeDelete {
			out[ch.Path] = changerecord.LayerEntry{Deleted: true}
			continue
		}
		todo = append(todo, ch.Path)
	}
	upper := ""
	if b.local() {
		upper = b.records.uppers.Of(id, func() (string, map[string]string, bool) {
			res, err := b.c.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
			if err != nil || res.Container.ID != id || res.Container.GraphDriver == nil {
				return "", nil, false
			}
			return res.Container.GraphDriver.Name, res.Container.GraphDriver.Data, true
		})
	}
	stats := make([]changerecord.LayerEntry, len(todo))
	errs := make([]error, len(todo))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(statWorkers, len(todo)) {
		wg.Go(func() {
			for i := range next {
				st, err := b.c.ContainerStatPath(ctx, id, client.ContainerStatPathOptions{Path: todo[i]})
				switch {
				case err == nil:
					stats[i] = changerecord.LayerEntry{Stat: st.Stat, Ctime: hoststate.ChangeTime(upper, todo[i])}
				case errors.Is(wrap(err, ""), providers.ErrNotFound):
					stats[i] = changerecord.LayerEntry{Deleted: true}
				default:
					errs[i] = wrap(err, "read the stat of "+todo[i])
				}
			}
		})
	}
	for i := range todo {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for i, p := range todo {
		out[p] = stats[i]
	}
	return out, nil
}

// maxLayers is how many layers a layered take's parent image may have: past
// it a take commits the container whole again, so that no image comes near
// the engine's bound on a container's layers (overlay2 stacks 128 at most).
const maxLayers = 100

// layeredTake is a take written as one layer on the image of the box's last
// take: the layer holds the paths of the container's writable layer whose
// stat changed since that take, read from the paused container through the
// engine's archive endpoint, and a whiteout (.wh.<name>) for each path gone.
// The new image is loaded from a docker-archive tar that names the parent's
// layers by diff ID without their content (the engine has them), so its
// layers are shared: deleting an older snapshot's tag leaves its layers to
// the later images that use them, and each snapshot is whole on its own.
type layeredTake struct {
	b       *Backend
	id      string // the container
	prev    *changerecord.ChangeRecord
	parent  image.InspectResponse
	file    *os.File
	cleanup func()
	diffID  string
	bytes   int64 // the bytes read from the container
	// paused are the layers of the container's written in the pause,
	// loaded above file; more are the layers loaded above those (the
	// volume's), and the container's own is left out where file is nil.
	paused []layerFile
	more   []layerFile
}

// layeredOn answers a layered take on the box's last take, or nil where a
// take must commit the container whole: no record of the last take, its
// image gone, or as many layers as maxLayers.
func (b incremental) layeredOn(ctx context.Context, id string) *layeredTake {
	prev := b.recordOf(ctx, id)
	if prev == nil || prev.Layers >= maxLayers || !b.loadsOnLayers(ctx) {
		return nil
	}
	cctx, cancel := short(ctx)
	defer cancel()
	img, err := b.c.ImageInspect(cctx, prev.Image)
	if err != nil || img.Config == nil || len(img.RootFS.Layers) == 0 {
		return nil
	}
	return &layeredTake{b: b.Backend, id: id, prev: prev, parent: img.InspectResponse}
}

// recordOf answers the record of the container's last take: the one this
// process holds, or else the one its file holds when the image it names is
// still this install's snapshot's (a record of a deleted snapshot, or of
// another install's, is ignored: the take goes whole). A file is read
// once a process.
func (b incremental) recordOf(ctx context.Context, id string) *changerecord.ChangeRecord {
	r := &b.records
	r.mu.Lock()
	rec, read := r.by[id], r.read[id]
	r.mu.Unlock()
	if rec != nil || read || b.cfg.StateDir == "" {
		return rec
	}
	rec, err := changerecord.LoadRecord(b.cfg.StateDir, b.cfg.Install, id)
	if err != nil {
		b.log.Warn("the record of a box's last take could not be read; its next take goes whole", "container", id, "err", err)
	}
	if rec != nil && !b.recordMatches(ctx, rec) {
		rec = nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.read == nil {
		r.read = map[string]bool{}
	}
	r.read[id] = true
	if r.by[id] == nil && rec != nil {
		if r.by == nil {
			r.by = map[string]*changerecord.ChangeRecord{}
		}
		r.by[id] = rec
	}
	return r.by[id]
}

// recordMatches says whether the image a record names is there, the
// snapshot the record says, of this install.
func (b incremental) recordMatches(ctx context.Context, rec *changerecord.ChangeRecord) bool {
	cctx, cancel := short(ctx)
	defer cancel()
	img, err := b.c.ImageInspect(cctx, rec.Image)
	if err != nil || img.Config == nil {
		return false
	}
	l := img.Config.Labels
	return l[labelSnapshot] == rec.Snap && l[labelInstall] == b.cfg.Install && len(img.RootFS.Layers) == rec.Layers
}

// keepRecord holds a container's record of the take just made, and writes
// it to its file; a file that cannot be written costs only the next
// restart's first take, which goes whole.
func (b incremental) keepRecord(id string, rec *changerecord.ChangeRecord) {
	b.records.put(id, rec)
	if err := changerecord.SaveRecord(b.cfg.StateDir, b.cfg.Install, id, rec); err != nil {
		b.log.Warn("the record of a box's take could not be written; after a restart its next take goes whole", "container", id, "err", err)
	}
}

// loadsOnLayers says whether the engine loads an image whose archive names
// layers it has without their content: an engine that keeps images in its
// own layer store does (it looks each layer up by its chain before it reads
// one); one on containerd's image store wants every layer's content, so
// there each take commits the container whole. The answer is asked of the
// engine once.
func (b incremental) loadsOnLayers(ctx context.Context) bool {
	r := &b.records
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.graph == "" {
		cctx, cancel := short(ctx)
		defer cancel()
		info, err := b.c.Info(cctx, client.InfoOptions{})
		if err != nil {
			return false // asked again at the next take
		}
		r.graph = "yes"
		for _, kv := range info.Info.DriverStatus {
			if kv[0] == "driver-type" && strings.Contains(kv[1], "containerd") {
				r.graph = "no"
			}
		}
	}
	return r.graph == "yes"
}

// close removes the files of the container's layers.
func (t *layeredTake) close() {
	if t == nil {
		return
	}
	if t.cleanup != nil {
		t.cleanup()
	}
	for _, l := range t.paused {
		l.file.cleanup()
	}
}

// writePaused writes a layer of the paths in d, the box paused, to be
// loaded above the one written before the pause; a layer of nothing is
// left out.
func (t *layeredTake) writePaused(ctx context.Context, d changerecord.LayerDelta) error {
	if d.Paths() == 0 {
		return nil
	}
	l, err := t.writeLayer(ctx, d)
	if err != nil {
		return err
	}
	t.paused = append(t.paused, l)
	return nil
}

// write writes the layer of what changed since the last take, from the
// paused container whose layer reads now.
func (t *layeredTake) write(ctx context.Context, now changerecord.LayerState) error {
	l, err := t.writeLayer(ctx, changerecord.LayerSince(t.prev.Layer, now))
	if err != nil {
		return err
	}
	t.file, t.cleanup, t.diffID = l.file.f, l.file.cleanup, l.diffID
	return nil
}

// writeLayer writes a layer of the container's paths in d: each changed
// path as the container holds it now, a whiteout for each path gone.
func (t *layeredTake) writeLayer(ctx context.Context, d changerecord.LayerDelta) (layerFile, error) {
	f, cleanup, err := tempLayer(t.b.state().LayerDir())
	if err != nil {
		return layerFile{}, err
	}
	out := layerFile{file: &tempFile{f: f, cleanup: cleanup}}
	h := sha256.New()
	tw := tar.NewWriter(io.MultiWriter(f, h))
	gone := map[string]bool{}
	for _, p := range d.Gone {
		gone[p] = true
	}
	for _, p := range slices.Sorted(slices.Values(append(d.Changed, d.Gone...))) {
		if gone[p] && underGone(p, gone) {
			continue // its folder's whiteout hides it; another would make the folder again
		}
		if gone[p] {
			dir, base := path.Split(p)
			err = tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(dir, "/") + ".wh." + base, Typeflag: tar.TypeReg, Mode: 0o600})
		} else {
			err = t.copyPath(ctx, tw, p)
		}
		if err != nil {
			cleanup()
			return layerFile{}, err
		}
		out.entries++
	}
	if err := tw.Close(); err != nil {
		cleanup()
		return layerFile{}, fmt.Errorf("write the new layer: %w", err)
	}
	out.diffID = "sha256:" + hex.EncodeToString(h.Sum(nil))
	return out, nil
}

// underGone says whether a folder above p is gone too.
func underGone(p string, gone map[string]bool) bool {
	for dir := path.Dir(p); dir != "/" && dir != "."; dir = path.Dir(dir) {
		if gone[dir] {
			return true
		}
	}
	return false
}

// copyPath writes one path of the container into the layer: a file with
// its content, a directory or a link as its header alone (a directory's
// own changed paths come each on its own).
func (t *layeredTake) copyPath(ctx context.Context, tw *tar.Writer, p string) error {
	res, err := t.b.c.CopyFromContainer(ctx, t.id, client.CopyFromContainerOptions{SourcePath: p})
	if err != nil {
		return wrap(err, "read "+p+" in the container")
	}
	defer func() { _ = res.Content.Close() }()
	tr := tar.NewReader(res.Content)
	hdr, err := tr.Next()
	if err != nil {
		return fmt.Errorf("read %s in the container: %w", p, err)
	}
	hdr.Name = strings.TrimPrefix(p, "/")
	if hdr.Typeflag == tar.TypeDir {
		hdr.Name += "/"
	}
	if hdr.Typeflag != tar.TypeReg {
		hdr.Size = 0
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("write %s into the new layer: %w", p, err)
	}
	if hdr.Typeflag != tar.TypeReg {
		return nil
	}
	n, err := io.Copy(tw, tr)
	t.bytes += n
	if err != nil {
		return fmt.Errorf("copy %s into the new layer: %w", p, err)
	}
	return nil
}

// load loads the new image, tagged as the snapshot's: the parent's config
// with the take's labels, its layers and the new one.
func (t *layeredTake) load(ctx context.Context, snap string, labels map[string]string) (string, error) {
	cfg := *t.parent.Config
	cfg.Labels = maps.Clone(cfg.Labels)
	if cfg.Labels == nil {
		cfg.Labels = map[string]string{}
	}
	maps.Copy(cfg.Labels, labels)
	diffIDs := slices.Clone(t.parent.RootFS.Layers)
	if t.file != nil {
		diffIDs = append(diffIDs, t.diffID)
	}
	for _, l := range t.above() {
		diffIDs = append(diffIDs, l.diffID)
	}
	config, err := json.Marshal(map[string]any{"architecture": t.parent.Architecture, "os": t.parent.Os,
		"created": time.Now().UTC(), "config": cfg, "rootfs": map[string]any{"type": "layers", "diff_ids": diffIDs}})
	if err != nil {
		return "", fmt.Errorf("write the new image's config: %w", err)
	}
	sum := sha256.Sum256(config)
	configName := hex.EncodeToString(sum[:]) + ".json"
	var names []string
	for i := range t.parent.RootFS.Layers {
		names = append(names, fmt.Sprintf("parent-%d/layer.tar", i)) // the engine has it: never read
	}
	if t.file != nil {
		names = append(names, "new/layer.tar")
	}
	for i := range t.above() {
		names = append(names, fmt.Sprintf("more-%d/layer.tar", i))
	}
	manifest, err := json.Marshal([]map[string]any{{"Config": configName, "RepoTags": []string{snapImage(snap)}, "Layers": names}})
	if err != nil {
		return "", fmt.Errorf("write the new image's manifest: %w", err)
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(t.archive(pw, config, configName, manifest)) }()
	res, err := t.b.c.ImageLoad(ctx, pr, client.ImageLoadWithQuiet(true))
	if err != nil {
		_ = pr.CloseWithError(err)
		return "", t.b.roomWords(ctx, wrap(err, "load the snapshot's image"))
	}
	defer func() { _ = res.Close() }()
	if err := loadErrors(res); err != nil {
		return "", err
	}
	cctx, cancel := short(ctx)
	defer cancel()
	img, err := t.b.c.ImageInspect(cctx, snapImage(snap))
	if err != nil {
		return "", wrap(err, "read the snapshot's loaded image")
	}
	return img.ID, nil
}

// above is the layers loaded above the container's own: those written in
// the pause, then the volume's.
func (t *layeredTake) above() []layerFile {
	return append(slices.Clone(t.paused), t.more...)
}

// archive writes the docker-archive tar: the new layer, the config, the
// manifest.
func (t *layeredTake) archive(w io.Writer, config []byte, configName string, manifest []byte) error {
	tw := tar.NewWriter(w)
	if t.file != nil {
		if err := moves.TarFile(tw, "new/layer.tar", t.file); err != nil {
			return err
		}
	}
	for i, l := range t.above() {
		if err := moves.TarFile(tw, fmt.Sprintf("more-%d/layer.tar", i), l.file.f); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{configName, config}, {"manifest.json", manifest}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data))}); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// loadErrors reads the engine's answer to a load: a stream of JSON
// messages, any of which may carry an error.
func loadErrors(r io.Reader) error {
	dec := json.NewDecoder(r)
	for {
		var m struct {
			Error string `json:"error"`
		}
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("read the engine's answer to the load: %w", err)
		}
		if m.Error != "" {
			err := fmt.Errorf("load the snapshot's image: %s", m.Error)
			if strings.Contains(m.Error, "no space left on device") {
				return fmt.Errorf("the Docker host's data root is full: %w (%w)", providers.ErrNoRoom, err)
			}
			return err
		}
	}
}

// tempLayer is a file for a layer being written, in dir (the engine's
// layerDir), held while the take runs and removed by its cleanup.
func tempLayer(dir string) (*os.File, func(), error) {
	f, err := hoststate.CreateHeld(dir, hoststate.LayerPattern)
	if err != nil {
		return nil, nil, fmt.Errorf("make a file for the new layer: %w", err)
	}
	return f, func() { _ = os.Remove(f.Name()); _ = f.Close() }, nil
}
