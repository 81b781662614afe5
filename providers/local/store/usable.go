package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/boxsnap/boxsnap/providers"
)

// LoadUsable reads a snapshot's manifest, refusing one that is incomplete,
// damaged or being deleted: such a snapshot is never restored or forked.
func (b *Store) LoadUsable(ref providers.SnapshotRef) (*Manifest, error) {
	id := SnapID(ref)
	if err := CheckID("snapshot", id); err != nil {
		return nil, err
	}
	dir := b.SnapDir(id)
	if _, err := os.Stat(dir); err != nil && b.FetchSnapshot != nil {
		// A snapshot another host took is read from the content store; its
		// callers hold no context to pass.
		if ferr := b.FetchSnapshot(context.Background(), id); ferr != nil && !errors.Is(ferr, providers.ErrNotFound) {
			return nil, fmt.Errorf("snapshot %s: %w", id, ferr)
		}
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", id, providers.ErrNotFound)
	}
	if _, err := os.Stat(filepath.Join(dir, FileDeleting)); err == nil {
		return nil, fmt.Errorf("snapshot %s: its delete stopped part way: %w", id, providers.ErrIncomplete)
	}
	if data, err := os.ReadFile(filepath.Join(dir, FileDamaged)); err == nil {
		return nil, fmt.Errorf("snapshot %s: %s: %w", id, strings.TrimSpace(string(data)), providers.ErrIncomplete)
	}
	m, err := b.Manifest(id)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("snapshot %s: its manifest is missing: %w", id, providers.ErrIncomplete)
		}
		return nil, fmt.Errorf("snapshot %s: its manifest is %v: %w", id, err, providers.ErrIncomplete)
	}
	return m, nil
}

// OwnerOf is the box a snapshot belongs to: its label's box (an imported
// snapshot belongs to its group's box), else the box it was taken of.
func (b *Store) OwnerOf(m *Manifest) string {
	var lab Label
	if ReadChecked(filepath.Join(b.SnapDir(m.ID), FileLabel), &lab) == nil && lab.Box != "" {
		return lab.Box
	}
	return m.Guest.Ref
}
