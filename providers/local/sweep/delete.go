package sweep

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/content"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// Deletes deletes the local backend's snapshots and sweeps the content no
// snapshot holds any more, under the store lock held exclusive.
type Deletes struct {
	*store.Store
	*content.Copier
	Log   *slog.Logger
	Hooks deleteHooks
	// Unname records that a snapshot names no object of the content store
	// any more; nil where there is none.
	Unname func(ctx context.Context, id string) error
	// Forks removes what forks and resets a crash cut short left (their
	// folders, disk images and mounts), answering the bytes freed; Sweep
	// calls it under the store lock held exclusive, which no fork or reset
	// at work lets it take. nil where none is left.
	Forks func() (int64, error)
}

// deleteHooks lets the backend's own tests stop a delete part way: nil
// outside tests.
type deleteHooks struct {
	// DeleteStep runs before each step of a delete; an error stops it there.
	DeleteStep func(step string) error
}

// collectTimeout bounds the clean-up after a failed take, which runs even
// when the take's own context has ended.
const collectTimeout = 2 * time.Minute

// The steps of a delete, in order; a delete cut short between two leaves the
// snapshot incomplete, and a second delete finishes it.
const (
	deleteMark     = "mark"     // write the deleting marker
	deleteManifest = "manifest" // remove the manifest, so its content is no longer used
	DeleteSweep    = "sweep"    // free the content no other snapshot uses
	deleteFolder   = "folder"   // remove the snapshot's folder and label
)

// DeleteSnapshot deletes one snapshot and frees the content no other snapshot
// uses. It waits for takes running now to publish first (the store lock), so
// it never frees content a take is about to name. Deleting a snapshot that is
// already gone succeeds.
func (b *Deletes) DeleteSnapshot(ctx context.Context, ref providers.SnapshotRef, rec providers.Recorder) error {
	id := store.SnapID(ref)
	if err := store.CheckID("snapshot", id); err != nil {
		return err
	}
	// The content store's record goes first: a snapshot taken on another
	// host has no folder here, and one whose delete stops later is
	// incomplete anyway.
	if b.Unname != nil {
		if err := b.Unname(ctx, id); err != nil {
			return fmt.Errorf("delete snapshot %s: %w (%w)", id, providers.ErrIncomplete, err)
		}
	}
	dir := b.SnapDir(id)
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	stopped := func(step string, err error) error {
		return fmt.Errorf("delete snapshot %s stopped at its %s step: %w (%w)", id, step, providers.ErrIncomplete, err)
	}
	step := func(name string) error {
		if b.Hooks.DeleteStep != nil {
			if err := b.Hooks.DeleteStep(name); err != nil {
				return stopped(name, err)
			}
		}
		if err := ctx.Err(); err != nil {
			return stopped(name, err)
		}
		return nil
	}
	if err := step(deleteMark); err != nil {
		return err
	}
	if err := markDeleting(filepath.Join(dir, store.FileDeleting)); err != nil {
		return stopped(deleteMark, err)
	}
	lock, err := b.LockStore(ctx, true)
	if err != nil {
		return stopped(deleteMark, err)
	}
	defer lock.Unlock()

	if err := step(deleteManifest); err != nil {
		return err
	}
	var candidates map[string]int64
	var m store.Manifest
	if err := store.ReadChecked(filepath.Join(dir, store.FileManifest), &m); err == nil {
		candidates = m.Hashes()
	}
	if err := os.Remove(filepath.Join(dir, store.FileManifest)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return stopped(deleteManifest, err)
	}
	b.Cache.Forget(id)
	if err := store.SyncDir(dir); err != nil {
		return stopped(deleteManifest, err)
	}

	if err := step(DeleteSweep); err != nil {
		return err
	}
	var freed int64
	if candidates != nil {
		freed, err = b.sweepLocked(ctx, candidates)
	} else {
		// A delete cut short after its manifest went does not know what the
		// snapshot used: sweep everything no manifest names.
		freed, err = b.sweepLocked(ctx, nil)
	}
	if err != nil {
		return stopped(DeleteSweep, err)
	}

	if err := step(deleteFolder); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return stopped(deleteFolder, err)
	}
	if err := store.SyncDir(b.Path(store.DirSnapshots)); err != nil {
		return stopped(deleteFolder, err)
	}
	b.Log.Debug("local backend: snapshot deleted", "snapshot", id, "freed", freed)
	return nil
}

// markDeleting makes a snapshot's deleting marker: an empty file, which
// needs no data block, so a delete (which frees room) still starts on a
// full disk.
func markDeleting(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("write %s: sync: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return store.SyncDir(filepath.Dir(path))
}

// referenced reads every manifest and gives the content they name. It is
// called with the store locked exclusive, so no take is half-way.
func (b *Deletes) referenced(ctx context.Context) (map[string]struct{}, error) {
	dirs, err := os.ReadDir(b.Path(store.DirSnapshots))
	if err != nil {
		return nil, fmt.Errorf("read the snapshots: %w", err)
	}
	out := make(map[string]struct{})
	for _, d := range dirs {
		if strings.HasPrefix(d.Name(), ".") || !d.IsDir() {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m, err := b.Manifest(d.Name())
		if err != nil {
			// A missing manifest is a snapshot being deleted; a damaged one
			// is never restored, so its content is not kept for it.
			continue
		}
		for i := range m.Entries {
			if m.Entries[i].Type == store.TypeFile {
				out[m.Entries[i].Hash] = struct{}{}
			}
		}
	}
	return out, nil
}

// sweepLocked removes the candidates no manifest names, or, with no
// candidates, every content file no manifest names, the leftovers of takes
// that stopped, and temporary files. The store must be locked exclusive.
func (b *Deletes) sweepLocked(ctx context.Context, candidates map[string]int64) (int64, error) {
	used, err := b.referenced(ctx)
	if err != nil {
		return 0, err
	}
	var freed int64
	remove := func(h string) error {
		fi, err := os.Lstat(b.ContentPath(h))
		if err != nil {
			return nil
		}
		b.Present.Forget()
		if err := os.Remove(b.ContentPath(h)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("free content %s: %w", h[:12], err)
		}
		// An object a shared tree links to stays on disk until the tree goes.
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Nlink <= 1 {
			freed += fi.Size()
		}
		return nil
	}
	if candidates != nil {
		keys := make([]string, 0, len(candidates))
		for h := range candidates {
			keys = append(keys, h)
		}
		sort.Strings(keys)
		for _, h := range keys {
			if _, ok := used[h]; ok || len(h) < 3 {
				continue
			}
			if err := remove(h); err != nil {
				return freed, err
			}
		}
		return freed, nil
	}
	subs, err := os.ReadDir(b.Path(store.DirContent))
	if err != nil {
		return 0, fmt.Errorf("read the content: %w", err)
	}
	for _, s := range subs {
		files, err := os.ReadDir(b.Path(store.DirContent, s.Name()))
		if err != nil {
			return freed, fmt.Errorf("read the content: %w", err)
		}
		for _, f := range files {
			h := s.Name() + f.Name()
			if _, ok := used[h]; ok {
				continue
			}
			if err := remove(h); err != nil {
				return freed, err
			}
		}
	}
	dirs, _ := os.ReadDir(b.Path(store.DirSnapshots))
	for _, d := range dirs {
		switch {
		case strings.HasPrefix(d.Name(), store.TakingPrefix):
			_ = os.RemoveAll(b.Path(store.DirSnapshots, d.Name()))
		case strings.HasPrefix(d.Name(), store.FetchingPrefix):
			// A fetch holds no store lock: only one a stopped process left.
			if info, err := d.Info(); err == nil && time.Since(info.ModTime()) > store.FetchLeftAge {
				_ = os.RemoveAll(b.Path(store.DirSnapshots, d.Name()))
			}
		}
	}
	tmps, _ := os.ReadDir(b.Path(store.DirTmp))
	for _, t := range tmps {
		_ = os.RemoveAll(b.Path(store.DirTmp, t.Name()))
	}
	return freed, nil
}

// Sweep frees every content file no snapshot names, the leftovers of
// takes, forks and resets cut short by a crash, and the shared trees no
// fork lies over. It waits for running takes, forks and resets to
// finish. It answers the bytes it freed.
func (b *Deletes) Sweep(ctx context.Context) (int64, error) {
	lock, err := b.LockStore(ctx, true)
	if err != nil {
		return 0, err
	}
	defer lock.Unlock()
	freed, err := b.sweepLocked(ctx, nil)
	if err != nil {
		return freed, err
	}
	if b.Forks != nil {
		n, err := b.Forks()
		freed += n
		if err != nil {
			b.Log.Warn("local backend: could not remove what a fork or a reset cut short left", "err", err)
		}
	}
	lowers, err := b.sweepLowers()
	return freed + lowers, err
}

// Collect frees the content a failed take added, where no snapshot names it.
func (b *Deletes) Collect(ctx context.Context, added []string) {
	if len(added) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), collectTimeout)
	defer cancel()
	lock, err := b.LockStore(ctx, true)
	if err != nil {
		b.Log.Warn("local backend: could not collect a failed take's content", "err", err)
		return
	}
	defer lock.Unlock()
	cands := make(map[string]int64, len(added))
	for _, h := range added {
		cands[h] = 0
	}
	if _, err := b.sweepLocked(ctx, cands); err != nil {
		b.Log.Warn("local backend: could not collect a failed take's content", "err", err)
	}
}
