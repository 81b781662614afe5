package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/confined"
	"github.com/boxsnap/boxsnap/providers/local/disks"
	"github.com/boxsnap/boxsnap/providers/local/state"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// ForkSnapshot makes a new box folder from a snapshot and cleans it of its
// source's identity before its first start, so it never acts as its
// source: the identity marker names the new box; the credential files a
// share code's copy leaves out, in the box's folder and in every home-like
// folder inside it, and the box's access file, are removed. The new box runs as its source box does: its command,
// user, environment and limits are the source's. A snapshot taken with no
// identity reset is refused.
func (f Forks) ForkSnapshot(ctx context.Context, ref providers.SnapshotRef, box providers.BoxIdentity, rec providers.Recorder) (providers.Guest, error) {
	return forkSnapshot(ctx, f.b, ref, box, nil)
}

var _ providers.CarriedFork = (*Backend)(nil)

// ForkSnapshotCarried is ForkSnapshot, the new box running with env, the
// environment the core recorded for the snapshot's box, where this host
// holds no state of that box (a snapshot another host took): the command,
// user, limits and network then come from the snapshot's label
// (orCarried).
func (f Forks) ForkSnapshotCarried(ctx context.Context, ref providers.SnapshotRef, box providers.BoxIdentity, env map[string]string, rec providers.Recorder) (providers.Guest, error) {
	return forkSnapshot(ctx, f.b, ref, box, env)
}

// forkSnapshot is ForkSnapshotCarried's work, on b.
func forkSnapshot(ctx context.Context, b *Backend, ref providers.SnapshotRef, box providers.BoxIdentity, env map[string]string) (providers.Guest, error) {
	m, err := b.Store.LoadUsable(ref)
	if err != nil {
		return providers.Guest{}, fmt.Errorf("fork: %w", err)
	}
	if m.ResetVersion == 0 {
		return providers.Guest{}, &providers.RefusedError{Why: providers.NoResetWords(m.Guest.Ref)}
	}
	if err := store.CheckID("box", box.ID); err != nil {
		return providers.Guest{}, err
	}
	dst := b.Store.BoxDir(box.ID)
	if _, err := os.Lstat(dst); err == nil {
		return providers.Guest{}, &providers.RefusedError{Why: fmt.Sprintf("A box folder named %s already exists", box.ID)}
	}
	// Deferred before the store lock's release, so it runs after: the
	// eviction takes the lock exclusive.
	defer keepCacheBound(ctx, b)
	lock, err := b.LockStore(ctx, false)
	if err != nil {
		return providers.Guest{}, fmt.Errorf("fork: %w", err)
	}
	defer lock.Unlock()
	// The fork runs as its source does: the same command, user,
	// environment and limits (its box template's), never the defaults.
	src, _ := b.ReadState(m.Guest.Ref)
	if owner := b.Store.OwnerOf(m); owner != m.Guest.Ref && src.Command == "" && src.User == "" && src.Env == nil && src.Limits == (providers.BoxLimits{}) {
		src, _ = b.ReadState(owner) // an imported snapshot's box
	}
	src = orCarried(src, b.carriedRun(m.ID), env)
	// A snapshot whose files hold more than the bound is refused before
	// anything is made (forkFolder checks the room an image leaves too).
	bound := diskBound(src.Limits, b.diskBytes)
	if err := disks.FitsWords(m, bound); err != nil {
		return providers.Guest{}, err
	}
	// The fork is made under a temporary name and renamed once clean, so a
	// box folder with its source's identity never exists under the new ID.
	tmp, tmpImg, image, lower, err := forkFolder(ctx, b, m, box.ID, bound)
	if err != nil {
		return providers.Guest{}, err
	}
	ok := false
	defer func() {
		if !ok {
			_ = b.RemoveBoxFolder(tmp, tmpImg)
		}
	}()
	// A box over its snapshot's shared tree has nothing to copy.
	if lower == "" {
		if _, err := b.ApplyNew(ctx, tmp, m); err != nil {
			return providers.Guest{}, fmt.Errorf("fork snapshot %s: %w", m.ID, err)
		}
	}
	sec := box.Secrets
	if len(sec.Home) == 0 && len(sec.System) == 0 {
		sec = providers.DefaultSecrets()
	}
	if _, err := cleanIdentity(tmp, sec); err != nil {
		return providers.Guest{}, fmt.Errorf("fork snapshot %s: clean its identity: %w", m.ID, err)
	}
	if err := writeIdentity(tmp, box.ID); err != nil {
		return providers.Guest{}, fmt.Errorf("fork snapshot %s: %w", m.ID, err)
	}
	kind := box.Kind
	if kind == "" {
		kind = m.Guest.Kind
	}
	st := state.BoxState{ID: box.ID, Kind: kind, Command: src.Command, User: src.User, Env: maps.Clone(src.Env), Limits: src.Limits, NoNetwork: src.NoNetwork,
		Parent: m.ID, ForkedFrom: m.ID, Lower: lower}
	if image {
		err = b.MoveImage(tmp, tmpImg, dst, b.ImageFile(box.ID))
	} else {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		return providers.Guest{}, fmt.Errorf("fork snapshot %s: %w", m.ID, err)
	}
	ok = true
	b.mu.Lock()
	err = b.WriteState(st)
	b.mu.Unlock()
	if err == nil {
		err = syncFork(b, box.ID, image, lower)
	}
	if err != nil {
		return providers.Guest{}, fmt.Errorf("fork snapshot %s: %w", m.ID, err)
	}
	return b.guestOf(box.ID, kind), nil
}

// cleanIdentity removes what sec lists (providers.Secrets: boxsnap's access
// file, the credential files of every home-like folder, a whole system's
// identity files) from a fork's folder. Every path is found beneath the
// folder with no link followed: a path through one is not inside the box and
// is left alone. It answers what it removed.
func cleanIdentity(dir string, sec providers.Secrets) ([]string, error) {
	t, err := confined.OpenTree(dir)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	var removed []string
	dirs := []string{}
	if isRealDir(t, "root") {
		dirs = append(dirs, "root")
	}
	for _, parent := range []string{"home", "Users"} {
		if !isRealDir(t, parent) {
			continue
		}
		ents, err := confined.ReadDirBeneath(t, parent)
		if err != nil {
			return removed, err
		}
		for _, e := range ents {
			if e.IsDir() && e.Type()&fs.ModeSymlink == 0 {
				dirs = append(dirs, parent+"/"+e.Name())
			}
		}
	}
	for _, target := range sec.Targets(providers.Homes(dirs)) {
		rels := []string{target}
		if strings.Contains(target, "*") {
			if rels, err = globBeneath(t, target); err != nil {
				return removed, err
			}
		}
		for _, rel := range rels {
			ok, err := removeInside(t, rel)
			if ok {
				removed = append(removed, rel)
			}
			if err != nil {
				return removed, err
			}
		}
	}
	return removed, nil
}

// isRealDir says whether rel is a folder beneath t reached through no link.
func isRealDir(t *confined.Beneath, rel string) bool {
	if confined.CheckRel(rel) != "" {
		return false
	}
	fd, err := t.Open(rel, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}

// globBeneath gives the paths beneath t that pattern (slash-separated, its
// parts as path.Match takes them) matches, in order, descending only into
// real folders.
func globBeneath(t *confined.Beneath, pattern string) ([]string, error) {
	found := []string{"."}
	parts := strings.Split(pattern, "/")
	for i, part := range parts {
		var next []string
		for _, dir := range found {
			if !strings.ContainsAny(part, "*?[\\") {
				next = append(next, path.Join(dir, part))
				continue
			}
			if dir != "." && !isRealDir(t, dir) {
				continue
			}
			ents, err := confined.ReadDirBeneath(t, dir)
			if err != nil {
				continue // gone, or not a folder
			}
			for _, e := range ents {
				if ok, err := path.Match(part, e.Name()); err != nil {
					return nil, err
				} else if ok && (i == len(parts)-1 || e.IsDir()) {
					next = append(next, path.Join(dir, e.Name()))
				}
			}
		}
		found = next
	}
	sort.Strings(found)
	return found, nil
}

// removeInside removes rel (a file, a link or a whole folder) if every folder
// on its way is a real folder beneath t.
func removeInside(t *confined.Beneath, rel string) (bool, error) {
	if confined.CheckRel(rel) != "" || rel == "." {
		return false, nil
	}
	if parent := path.Dir(rel); parent != "." && !isRealDir(t, parent) {
		return false, nil
	}
	var st unix.Stat_t
	if err := t.Lstat(rel, &st); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	// RemoveAll removes a link itself, never what it points to.
	if err := t.RemoveAll(rel); err != nil {
		return false, err
	}
	return true, nil
}
