package ship

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/objstore"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// FetchSnapshot brings snapshot id, taken on another host, from the
// bucket: its manifest and label, each checked by its checksum line, into
// a folder written whole and renamed into place, marked shipped. Its
// content is fetched when a restore, fork or read needs it. A snapshot
// the bucket lacks answers an *objstore.ObjectError (ErrMissing).
func (s *Shipper) FetchSnapshot(ctx context.Context, id string) error {
	if s == nil || s.Remote == nil {
		return ErrNoContentStore
	}
	if err := store.CheckID("snapshot", id); err != nil {
		return err
	}
	tmp := s.Path(store.DirSnapshots, store.FetchingPrefix+id+"-"+store.RandomSuffix())
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	keys := s.Remote.Keys
	for _, f := range []struct{ key, name string }{{keys.ManifestKey(id), store.FileManifest}, {keys.LabelKey(id), store.FileLabel}} {
		if err := s.getFile(ctx, f.key, filepath.Join(tmp, f.name)); errors.Is(err, objstore.ErrMissing) {
			return fmt.Errorf("%w (%w)", err, providers.ErrNotFound)
		} else if err != nil {
			return err
		}
	}
	var m store.Manifest
	if err := store.ReadChecked(filepath.Join(tmp, store.FileManifest), &m); err != nil || m.ID != id {
		return fmt.Errorf("snapshot %s's manifest in the content store: %w", id, corruptOr(keys.ManifestKey(id), s, err))
	}
	var lab store.Label
	if err := store.ReadChecked(filepath.Join(tmp, store.FileLabel), &lab); err != nil {
		return fmt.Errorf("snapshot %s's label in the content store: %w", id, corruptOr(keys.LabelKey(id), s, err))
	}
	if err := store.WriteFileAtomic(filepath.Join(tmp, FileShipped), []byte(keys.ManifestKey(id)+"\n"), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, s.SnapDir(id)); err != nil {
		if _, serr := os.Stat(s.SnapDir(id)); serr == nil {
			return nil // fetched by another read meanwhile
		}
		return err
	}
	return nil
}

// getFile gets the object key into the file path.
func (s *Shipper) getFile(ctx context.Context, key, path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if err := s.Remote.Objects.Get(ctx, key, "", f); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
