package overlay

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/boxsnap/boxsnap/providers/local/store"
)

// DirLowers holds the shared trees, lowers/<snapshotID>/tree, outside
// boxes/: no box's folder leads to them.
const DirLowers = "lowers"

// makingPrefix names a tree still being written; a sweep removes it.
const makingPrefix = ".making-"

// fileLock is the flock held while a tree is looked for or made, so
// forks of one snapshot at once write its tree once.
const fileLock = ".lock"

// Lowers are the shared trees of a data folder.
type Lowers struct {
	*store.Store
}

// Tree is the shared tree of the snapshot snap.
func (l *Lowers) Tree(snap string) string { return l.Path(DirLowers, snap, "tree") }

// Ensure answers the shared tree of the snapshot snap, written once by
// write into an empty folder (under a temporary name, renamed once
// whole) if there is none yet. A tree half written by a process killed
// is never used: a sweep removes it.
func (l *Lowers) Ensure(ctx context.Context, snap string, write func(ctx context.Context, dir string) error) (string, error) {
	if err := store.CheckID("snapshot", snap); err != nil {
		return "", err
	}
	tree := l.Tree(snap)
	if _, err := os.Lstat(tree); err == nil {
		return tree, nil
	}
	if err := os.MkdirAll(l.Path(DirLowers), 0o700); err != nil {
		return "", fmt.Errorf("the shared trees' folder: %w", err)
	}
	// Each tree is made in a folder of its own placed apart, with its
	// folders, links and copies (store.SpreadFolders).
	store.SpreadFolders(l.Path(DirLowers))
	unlock, err := l.lock()
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Lstat(tree); err == nil {
		return tree, nil // another fork wrote it while this one waited
	}
	tmp := l.Path(DirLowers, makingPrefix+snap+"-"+store.RandomSuffix())
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return "", fmt.Errorf("the shared tree: %w", err)
	}
	err = os.Mkdir(filepath.Join(tmp, "tree"), 0o700)
	if err == nil {
		err = write(ctx, filepath.Join(tmp, "tree"))
	}
	if err == nil {
		err = os.Rename(tmp, l.Path(DirLowers, snap))
	}
	if err != nil {
		_ = os.RemoveAll(tmp)
		return "", fmt.Errorf("the shared tree of snapshot %s: %w", snap, err)
	}
	return tree, nil
}

// lock takes the shared trees' flock.
func (l *Lowers) lock() (func(), error) {
	return store.LockFile(l.Path(DirLowers, fileLock), "the shared trees' lock")
}

// Named lists the snapshots whose shared trees exist.
func (l *Lowers) Named() []string {
	ents, err := os.ReadDir(l.Path(DirLowers))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && store.CheckID("snapshot", e.Name()) == nil {
			out = append(out, e.Name())
		}
	}
	return out
}

// Sweep removes every shared tree inUse does not name, and every tree
// half written, answering the bytes it freed. The caller holds the store
// lock exclusive, so no fork is about to name a tree it removes.
func (l *Lowers) Sweep(inUse map[string]bool) (int64, error) {
	ents, err := os.ReadDir(l.Path(DirLowers))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("the shared trees: %w", err)
	}
	unlock, err := l.lock()
	if err != nil {
		return 0, err
	}
	defer unlock()
	var freed int64
	for _, e := range ents {
		name := e.Name()
		if !e.IsDir() || inUse[name] || (!strings.HasPrefix(name, makingPrefix) && store.CheckID("snapshot", name) != nil) {
			continue
		}
		dir := l.Path(DirLowers, name)
		if !strings.HasPrefix(name, makingPrefix) {
			// Renamed out of use first, so a sweep cut short never leaves
			// a tree half removed under the name a fork would lie over.
			gone := l.Path(DirLowers, makingPrefix+name+"-"+store.RandomSuffix())
			if err := os.Rename(dir, gone); err != nil {
				return freed, fmt.Errorf("remove the shared tree %s: %w", name, err)
			}
			dir = gone
		}
		n := sizeOf(dir)
		if err := os.RemoveAll(dir); err != nil {
			return freed, fmt.Errorf("remove the shared tree %s: %w", name, err)
		}
		freed += n
	}
	return freed, nil
}

// sizeOf is what removing the files under dir frees on disk, read
// through no link: a file with another name (the store's content object
// it is a link to, or another tree's link) frees nothing.
func sizeOf(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if info, err := d.Info(); err == nil {
			if st, ok := info.Sys().(*syscall.Stat_t); ok && (d.IsDir() || st.Nlink <= 1) {
				n += st.Blocks * 512
			}
		}
		return nil
	})
	return n
}
