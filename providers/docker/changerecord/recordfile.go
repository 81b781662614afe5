package changerecord

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
)

// recordJSON is a ChangeRecord as its file holds it.
type recordJSON struct {
	Container string               `json:"container"`
	Install   string               `json:"install"`
	Snapshot  string               `json:"snapshot"`
	Image     string               `json:"image"`
	Layers    int                  `json:"layers"`
	VolumeIn  bool                 `json:"volume_in"`
	Layer     map[string]layerJSON `json:"layer"`
	Volume    VolumeState          `json:"volume"`
	Stamp     time.Time            `json:"stamp"`
}

// layerJSON is one path of a container's writable layer as a record's file
// holds it.
type layerJSON struct {
	Deleted bool               `json:"deleted,omitempty"`
	Stat    container.PathStat `json:"stat"`
	Ctime   *time.Time         `json:"ctime,omitempty"`
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
func isHexID(id string) bool { return len(id) == 64 && strings.Trim(id, "0123456789abcdef") == "" }

// SaveRecord writes a container's record to its file, atomically (a file
// written beside it and renamed over it), once the take's image exists: a
// record on disk always names an image the engine made.
func SaveRecord(dir, install, id string, rec *ChangeRecord) error {
	p := recordPath(dir, id)
	if p == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("make the records' folder: %w", err)
	}
	out := recordJSON{Container: id, Install: install, Snapshot: rec.Snap, Image: rec.Image, Layers: rec.Layers,
		VolumeIn: rec.VolumeIn, Layer: make(map[string]layerJSON, len(rec.Layer)), Volume: rec.Volume, Stamp: rec.Stamp}
	for path, e := range rec.Layer {
		l := layerJSON{Deleted: e.Deleted, Stat: e.Stat}
		if !e.Ctime.IsZero() {
			l.Ctime = &e.Ctime
		}
		out.Layer[path] = l
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".record-*")
	if err != nil {
		return fmt.Errorf("write the take's record: %w", err)
	}
	defer func() { _ = os.Remove(f.Name()) }()
	zw := gzip.NewWriter(f)
	if err = json.NewEncoder(zw).Encode(out); err == nil {
		err = errors.Join(zw.Close(), f.Sync())
	}
	if err = errors.Join(err, f.Close()); err == nil {
		err = os.Rename(f.Name(), p)
	}
	return wrapIf(err, "write the take's record")
}

// wrapIf says what failed, or answers nil.
func wrapIf(err error, what string) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// LoadRecord reads a container's record from its file: nil where there is
// none, or where it is not this install's record of this container.
func LoadRecord(dir, install, id string) (*ChangeRecord, error) {
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
	rec := &ChangeRecord{Snap: in.Snapshot, Image: in.Image, Layers: in.Layers, VolumeIn: in.VolumeIn,
		Layer: make(LayerState, len(in.Layer)), Volume: in.Volume, Stamp: in.Stamp}
	if rec.Volume == nil {
		rec.Volume = VolumeState{}
	}
	for path, e := range in.Layer {
		le := LayerEntry{Deleted: e.Deleted, Stat: e.Stat}
		if e.Ctime != nil {
			le.Ctime = *e.Ctime
		}
		rec.Layer[path] = le
	}
	return rec, nil
}

// RemoveRecord removes a container's record's file, if it has one.
func RemoveRecord(dir, id string) { _ = os.Remove(recordPath(dir, id)) } // "" names no file
