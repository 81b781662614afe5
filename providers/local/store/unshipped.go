package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Unshipped lists the snapshots the store holds whole (not damaged, not
// being deleted) with no file named shipped in their folder, oldest first
// by their label's time: with a content store, those taken before it was
// set, which are on this host alone.
func (b *Store) Unshipped(ctx context.Context, shipped string) ([]string, error) {
	dirs, err := os.ReadDir(b.Path(DirSnapshots))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list the snapshots to ship: %w", err)
	}
	type one struct {
		id    string
		taken time.Time
	}
	var out []one
	for _, d := range dirs {
		id := d.Name()
		if strings.HasPrefix(id, ".") || !d.IsDir() || !b.WholeSnapshot(id) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if b.HasFile(id, shipped) || b.HasFile(id, FileDamaged) {
			continue
		}
		o := one{id: id}
		var lab Label
		if ReadChecked(filepath.Join(b.SnapDir(id), FileLabel), &lab) == nil {
			o.taken = lab.TakenAt
		}
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].taken.Equal(out[j].taken) {
			return out[i].taken.Before(out[j].taken)
		}
		return out[i].id < out[j].id
	})
	ids := make([]string, len(out))
	for i, o := range out {
		ids[i] = o.id
	}
	return ids, nil
}

// HasFile says whether snapshot id's folder holds a file named name; with
// name empty, whether the folder is there.
func (b *Store) HasFile(id, name string) bool {
	_, err := os.Lstat(filepath.Join(b.SnapDir(id), name))
	return err == nil
}
