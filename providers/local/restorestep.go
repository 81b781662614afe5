package local

import (
	"context"
	"fmt"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/diskimage"
	"github.com/boxsnap/boxsnap/providers/local/disks"
	"github.com/boxsnap/boxsnap/providers/local/state"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// RestoreSnapshot runs one step of a restore in place, in restoreOrder.
func (b *Backend) RestoreSnapshot(ctx context.Context, guest providers.Guest, ref providers.SnapshotRef, step providers.RestoreStep, rec providers.Recorder) (providers.RestoreProgress, error) {
	switch step {
	case providers.StepStop:
		dir, err := b.existingBox(guest)
		if err != nil {
			return providers.RestoreProgress{}, fmt.Errorf("restore, stop: %w", err)
		}
		// A snapshot that does not fit the box is refused before the box is
		// stopped, as well as before its files are written (rollback).
		if m, err := b.Store.LoadUsable(ref); err == nil {
			if err := b.restoreFits(guest.Ref, dir, m); err != nil {
				return providers.RestoreProgress{}, err
			}
		}
		on, err := b.Runs(ctx, guest)
		if err != nil {
			return providers.RestoreProgress{}, fmt.Errorf("restore, stop: %w", err)
		}
		// The change journal goes on: the rollback reads it.
		if err := b.stop(ctx, guest); err != nil {
			return providers.RestoreProgress{}, fmt.Errorf("restore, stop: %w", err)
		}
		return providers.RestoreProgress{Step: step, Done: true, Note: "box stopped", Ended: on}, nil
	case providers.StepRollback:
		n, err := b.rollback(ctx, guest, ref)
		keepCacheBound(ctx, b)
		if err != nil {
			return providers.RestoreProgress{}, fmt.Errorf("restore, put the folder back: %w", err)
		}
		return providers.RestoreProgress{Step: step, Done: true, Note: n}, nil
	case providers.StepStart:
		if err := b.Start(ctx, guest); err != nil {
			return providers.RestoreProgress{}, fmt.Errorf("restore, start: %w", err)
		}
		return providers.RestoreProgress{Step: step, Done: true, Note: "box started"}, nil
	case providers.StepReadSize:
		dir, err := b.existingBox(guest)
		if err != nil {
			return providers.RestoreProgress{}, fmt.Errorf("restore, read the size: %w", err)
		}
		sz, err := b.TreeSize(ctx, dir)
		if err != nil {
			return providers.RestoreProgress{}, fmt.Errorf("restore, read the size: %w", err)
		}
		return providers.RestoreProgress{Step: step, Done: true, Size: &providers.BoxSize{DiskBytes: sz}}, nil
	case providers.StepUndo:
		return providers.RestoreProgress{}, fmt.Errorf("restore step %q is the core's own take: %w", step, providers.ErrUnsupported)
	}
	return providers.RestoreProgress{}, fmt.Errorf("restore step %q: %w", step, providers.ErrUnsupported)
}

// rollback brings the box's folder to exactly the snapshot.
func (b *Backend) rollback(ctx context.Context, guest providers.Guest, ref providers.SnapshotRef) (string, error) {
	dir, err := b.existingBox(guest)
	if err != nil {
		return "", err
	}
	m, err := b.Store.LoadUsable(ref)
	if err != nil {
		return "", err
	}
	if owner := b.Store.OwnerOf(m); owner != guest.Ref {
		return "", &providers.RefusedError{Why: fmt.Sprintf("Snapshot %s is of box %s, not %s: fork it instead", m.ID, owner, guest.Ref)}
	}
	if err := b.restoreFits(guest.Ref, dir, m); err != nil {
		return "", err
	}
	lock, err := b.LockStore(ctx, false)
	if err != nil {
		return "", err
	}
	defer lock.Unlock()
	st, err := b.ReadState(guest.Ref)
	if err != nil {
		return "", err
	}
	// With the change journal, the folder as it is now is the last manifest
	// plus the paths the journal names: no walk. The restore's own writes go
	// to the journal's next record.
	jc := b.CutJournal(guest.Ref)
	found, _, why := b.FromJournal(ctx, dir, st, jc)
	var known map[string]*store.Entry
	if found == nil {
		b.log.Info("local backend: the restore reads the box's whole folder", "box", guest.Ref, "why", why)
		known = b.StatIndex(st)
	}
	res, err := b.Apply(ctx, dir, m, known, found)
	if err != nil {
		return "", err
	}
	if err := syncWritten(b, dir); err != nil {
		return "", err
	}
	cache := false
	if err := b.WriteStatCache(guest.Ref, m, res.Keys); err != nil {
		b.log.Warn("local backend: could not keep the stat cache after a restore; the next take reads more", "box", guest.Ref, "err", err)
	} else {
		cache = true
	}
	if err := b.UpdateState(guest.Ref, func(s *state.BoxState) {
		s.Parent = m.ID
		s.ID = guest.Ref
		s.StatCache = ""
		if cache {
			s.StatCache = m.ID
		}
	}); err != nil {
		return "", err
	}
	if cache {
		b.RebaseJournal(guest.Ref, jc, "restore:"+m.ID)
	}
	return fmt.Sprintf("%d files rewritten, %d removed, %d with their details put back", res.Written, res.Removed, res.Meta), nil
}

// restoreFits refuses, in words, a restore of m whose files hold more than
// the box's disk bound leaves for them: its own file system's room for
// files, or the bound the watch keeps. A restore that does not fit would
// fail half-way (no space left on device), or be stopped at its start. One
// that fits gets its room in the box's file system before it writes.
func (b *Backend) restoreFits(box, dir string, m *store.Manifest) error {
	if b.HasImage(box) && disks.IsMounted(dir) {
		r, err := disks.RoomOf(dir)
		if err != nil {
			return fmt.Errorf("read box %s's room: %w", box, err)
		}
		if err := disks.FitsWords(m, r.Capacity); err != nil {
			return err
		}
		return diskimage.MakeRoomIn(dir, m.Bytes)
	}
	st, err := b.ReadState(box)
	if err != nil {
		return err
	}
	return disks.FitsWords(m, diskBound(st.Limits, b.diskBytes))
}
