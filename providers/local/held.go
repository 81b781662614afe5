package local

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

	"github.com/boxsnap/boxsnap/providers"
)

// HeldSnapshots lists every snapshot of this install in the store, from its
// label, so the core finds them again after its records are lost. A snapshot
// with a damaged label or manifest, missing or damaged content, or a delete
// that stopped part way, is listed Incomplete with the reason in words.
func (b *Backend) HeldSnapshots(ctx context.Context) ([]providers.HeldSnapshot, error) {
	dirs, err := os.ReadDir(b.path(dirSnapshots))
	if err != nil {
		return nil, fmt.Errorf("list the snapshots in %s: %w", b.path(dirSnapshots), err)
	}
	type one struct {
		held   providers.HeldSnapshot
		hashes map[string]int64
	}
	var all []*one
	uses := make(map[string]int)
	contentOK := make(map[string]bool)
	for _, d := range dirs {
		if strings.HasPrefix(d.Name(), ".") || !d.IsDir() {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		id := d.Name()
		dir := b.snapDir(id)
		var lab label
		lerr := readChecked(filepath.Join(dir, fileLabel), &lab)
		if lerr == nil && b.install != "" && lab.Install != b.install {
			continue
		}
		h := providers.HeldSnapshot{
			Ref:     providers.SnapshotRef{ID: lab.Snapshot, Ref: id, Storage: b.id, Where: "current"},
			Label:   lab.Label,
			Host:    b.host,
			Storage: b.id,
			TakenAt: lab.TakenAt,
			Holds:   providers.HoldsDisk,
		}
		bad := func(why string) {
			if !h.Incomplete {
				h.Incomplete = true
				h.Error = why
			}
		}
		if lerr != nil {
			h.Ref.ID = id
			h.Label.Snapshot = id
			bad(fmt.Sprintf("Its label is unreadable: %v", lerr))
		}
		if _, err := os.Stat(filepath.Join(dir, fileDeleting)); err == nil {
			bad("Its delete stopped part way; delete it again to finish")
		}
		if data, err := os.ReadFile(filepath.Join(dir, fileDamaged)); err == nil {
			bad(strings.TrimSpace(string(data)))
		}
		o := &one{}
		m, err := b.manifest(id)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				bad("Its manifest is missing")
			} else {
				bad(fmt.Sprintf("Its manifest is damaged on disk (%v)", err))
			}
		} else {
			h.Ref.Guest = m.Guest
			if lerr == nil && lab.Box != "" && lab.Box != m.Guest.Ref {
				h.Ref.Guest = b.guestOf(lab.Box, m.Guest.Kind) // imported for this box
			}
			h.Parent = m.Parent
			if h.TakenAt.IsZero() {
				h.TakenAt = m.CapturedAt
			}
			o.hashes = m.hashes()
			for i := range m.Entries {
				e := &m.Entries[i]
				if e.Type != typeFile {
					continue
				}
				ok, seen := contentOK[e.Hash]
				if !seen {
					fi, err := os.Lstat(b.contentPath(e.Hash))
					ok = err == nil && fi.Size() == e.Size
					contentOK[e.Hash] = ok
				}
				if !ok {
					bad(fmt.Sprintf("The content of %s is missing or damaged on disk", e.Path))
					break
				}
			}
			for hash := range o.hashes {
				uses[hash]++
			}
		}
		o.held = h
		all = append(all, o)
	}
	out := make([]providers.HeldSnapshot, 0, len(all))
	for _, o := range all {
		if o.hashes != nil {
			var own int64
			for hash, size := range o.hashes {
				if uses[hash] == 1 {
					own += size
				}
			}
			o.held.Size = &providers.Size{Bytes: own, Meaning: "own"}
		}
		out = append(out, o.held)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].TakenAt.Equal(out[j].TakenAt) {
			return out[i].TakenAt.Before(out[j].TakenAt)
		}
		return out[i].Ref.Ref < out[j].Ref.Ref
	})
	return out, nil
}

// SetKeptUntil writes a snapshot's keep date on its label (nil: not kept),
// so a kept snapshot is found again as kept after boxsnap's records are lost.
func (b *Backend) SetKeptUntil(ctx context.Context, ref providers.SnapshotRef, keptUntil *time.Time) error {
	id := snapID(ref)
	if err := checkID("snapshot", id); err != nil {
		return err
	}
	path := filepath.Join(b.snapDir(id), fileLabel)
	var lab label
	if err := readChecked(path, &lab); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("set the keep date of snapshot %s: %w", id, providers.ErrNotFound)
		}
		return fmt.Errorf("set the keep date of snapshot %s: its label is %v: %w", id, err, providers.ErrIncomplete)
	}
	if keptUntil != nil {
		t := keptUntil.UTC()
		lab.KeptUntil = &t
	} else {
		lab.KeptUntil = nil
	}
	data, err := encodeChecked(lab)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(path, data, 0o600); err != nil {
		return fmt.Errorf("set the keep date of snapshot %s: %w", id, err)
	}
	return nil
}
