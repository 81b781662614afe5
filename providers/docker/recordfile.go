package docker

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/moby/moby/api/types/container"
)

// recordJSON is a changeRecord as its file holds it.
type recordJSON struct {
	Container string               `json:"container"`
	Install   string               `json:"install"`
	Snapshot  string               `json:"snapshot"`
	Image     string               `json:"image"`
	Layers    int                  `json:"layers"`
	VolumeIn  bool                 `json:"volume_in"`
	Layer     map[string]layerJSON `json:"layer"`
	Volume    volumeState          `json:"volume"`
}

// layerJSON is one path of a container's writable layer as a record's file
// holds it.
type layerJSON struct {
	Deleted bool               `json:"deleted,omitempty"`
	Stat    container.PathStat `json:"stat"`
}

// recordPath is the file of a container's record in dir, or "" where the
// backend keeps records in memory only or the ID is not an engine's.
func recordPath(dir, id string) string {
	if dir == "" || !isHexID(id) {
		return ""
	}
	return filepath.Join(dir, "records", id+".json.gz")
}

// isHexID says whether id is a container ID as the engine writes them, so
// that it names a file and nothing else.
func isHexID(id string) bool {
	if len(id) != 64 {
		return false
	}
	for _, c := range id {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// saveRecord writes a container's record to its file, atomically (a file
// written beside it and renamed over it), once the take's image exists: a
// record on disk always names an image the engine made.
func saveRecord(dir, install, id string, rec *changeRecord) error {
	p := recordPath(dir, id)
	if p == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("make the records' folder: %w", err)
	}
	out := recordJSON{Container: id, Install: install, Snapshot: rec.snap, Image: rec.image, Layers: rec.layers,
		VolumeIn: rec.volumeIn, Layer: make(map[string]layerJSON, len(rec.layer)), Volume: rec.volume}
	for path, e := range rec.layer {
		out.Layer[path] = layerJSON{Deleted: e.deleted, Stat: e.stat}
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".record-*")
	if err != nil {
		return fmt.Errorf("write the take's record: %w", err)
	}
	defer func() { _ = os.Remove(f.Name()) }()
	zw := gzip.NewWriter(f)
	err = json.NewEncoder(zw).Encode(out)
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		return fmt.Errorf("write the take's record: %w", err)
	}
	return nil
}

// loadRecord reads a container's record from its file: nil where there is
// none, or where it is not this install's record of this container.
func loadRecord(dir, install, id string) (*changeRecord, error) {
	p := recordPath(dir, id)
	if p == "" {
		return nil, nil
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the take's record: %w", err)
	}
	defer func() { _ = f.Close() }()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, nil // not a record boxsnap wrote whole: ignored
	}
	var in recordJSON
	if err := json.NewDecoder(zr).Decode(&in); err != nil || in.Container != id || in.Install != install || in.Image == "" {
		return nil, nil
	}
	rec := &changeRecord{snap: in.Snapshot, image: in.Image, layers: in.Layers, volumeIn: in.VolumeIn,
		layer: make(layerState, len(in.Layer)), volume: in.Volume}
	if rec.volume == nil {
		rec.volume = volumeState{}
	}
	for path, e := range in.Layer {
		rec.layer[path] = layerEntry{deleted: e.Deleted, stat: e.Stat}
	}
	return rec, nil
}

// removeRecord removes a container's record's file, if it has one.
func removeRecord(dir, id string) {
	if p := recordPath(dir, id); p != "" {
		_ = os.Remove(p)
	}
}

// recordOf answers the record of the container's last take: the one this
// process holds, or else the one its file holds when the image it names is
// still this install's snapshot's (a record of a deleted snapshot, or of
// another install's, is ignored: the take goes whole). A file is read
// once a process.
func (b incremental) recordOf(ctx context.Context, id string) *changeRecord {
	r := &b.records
	r.mu.Lock()
	rec, read := r.by[id], r.read[id]
	r.mu.Unlock()
	if rec != nil || read || b.cfg.StateDir == "" {
		return rec
	}
	rec, err := loadRecord(b.cfg.StateDir, b.cfg.Install, id)
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
			r.by = map[string]*changeRecord{}
		}
		r.by[id] = rec
	}
	return r.by[id]
}

// recordMatches says whether the image a record names is there, the
// snapshot the record says, of this install.
func (b incremental) recordMatches(ctx context.Context, rec *changeRecord) bool {
	cctx, cancel := short(ctx)
	defer cancel()
	img, err := b.c.ImageInspect(cctx, rec.image)
	if err != nil || img.Config == nil {
		return false
	}
	l := img.Config.Labels
	return l[labelSnapshot] == rec.snap && l[labelInstall] == b.cfg.Install && len(img.RootFS.Layers) == rec.layers
}

// keepRecord holds a container's record of the take just made, and writes
// it to its file; a file that cannot be written costs only the next
// restart's first take, which goes whole.
func (b incremental) keepRecord(id string, rec *changeRecord) {
	b.records.put(id, rec)
	if err := saveRecord(b.cfg.StateDir, b.cfg.Install, id, rec); err != nil {
		b.log.Warn("the record of a box's take could not be written; after a restart its next take goes whole", "container", id, "err", err)
	}
}
