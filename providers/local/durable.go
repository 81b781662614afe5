package local

import (
	"fmt"
	"path/filepath"

	"github.com/boxsnap/boxsnap/providers/local/disks"
	"github.com/boxsnap/boxsnap/providers/local/overlay"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// syncWritten puts on disk what a restore or a fork wrote into the box's
// folder dir before the operation says done, so a power cut right after
// "restored" cannot lose the files its record and undo say are there, as a
// take's one syncfs before "ready" does for its snapshot. It is one syncfs
// of dir's file system: a box on a disk image of its own (or an overlay on
// one) flushes that box alone; a box folder on the data folder's file
// system flushes that file system, whose cost is the bytes waiting on it,
// where an fsync of each written file costs a journal commit each (on a
// copy of /usr/share, 54,043 paths, about 4 s 8 at once however little
// waits; bench/durable). folders are synced after it, so the renames and
// state files that name the box survive too. Config.NoSync skips it.
func syncWritten(b *Backend, dir string, folders ...string) error {
	if b.noSync {
		return nil
	}
	if err := store.SyncFS(dir); err != nil {
		return fmt.Errorf("put the box's files on disk: %w", err)
	}
	for _, f := range folders {
		if err := store.SyncDir(f); err != nil {
			return fmt.Errorf("put the box's files on disk: %w", err)
		}
	}
	if b.hooks.synced != nil {
		b.hooks.synced(dir)
	}
	return nil
}

// syncFork puts a fork named box on disk once it holds its files, its
// name and its state: its file system (syncWritten), and the folders that
// hold its name, its image, its state file and its shared tree.
func syncFork(b *Backend, box string, image bool, lower string) error {
	dir := b.Store.BoxDir(box)
	folders := []string{filepath.Dir(dir), filepath.Dir(b.StateFile(box))}
	if image {
		folders = append(folders, b.Path(disks.DirDisks))
	}
	if lower != "" {
		folders = append(folders, b.Path(overlay.DirLowers))
	}
	if !b.noSync {
		// The state file is written with no fsync of its own (a plain
		// rename); a fork's is the box's record on this host.
		if err := store.SyncDir(b.StateFile(box)); err != nil {
			return fmt.Errorf("put the box's files on disk: %w", err)
		}
	}
	return syncWritten(b, dir, folders...)
}
