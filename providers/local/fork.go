package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/boxsnap/boxsnap/providers"
)

// ForkSnapshot makes a new box folder from a snapshot and cleans it of its
// source's identity before its first start (section 9): the identity marker
// names the new box; the credential files moatbox's share codes remove, in the
// box's folder and in every home-like folder inside it, and the box's access
// file, are removed. The new box runs as its source box does: its command,
// user, environment and limits are the source's. A snapshot taken with no
// identity reset is refused.
func (b *Backend) ForkSnapshot(ctx context.Context, ref providers.SnapshotRef, box providers.BoxIdentity, rec providers.Recorder) (providers.Guest, error) {
	m, err := b.loadUsable(ref)
	if err != nil {
		return providers.Guest{}, fmt.Errorf("fork: %w", err)
	}
	if m.ResetVersion == 0 {
		return providers.Guest{}, &providers.RefusedError{Why: providers.NoResetWords(m.Guest.Ref)}
	}
	if err := checkID("box", box.ID); err != nil {
		return providers.Guest{}, err
	}
	dst := b.boxDir(box.ID)
	if _, err := os.Lstat(dst); err == nil {
		return providers.Guest{}, &providers.RefusedError{Why: fmt.Sprintf("A box folder named %s already exists", box.ID)}
	}
	lock, err := b.lockStore(ctx, false)
	if err != nil {
		return providers.Guest{}, fmt.Errorf("fork: %w", err)
	}
	defer lock.unlock()
	// The fork is made under a temporary name and renamed once clean, so a
	// box folder with its source's identity never exists under the new ID.
	tmp := b.path(dirBoxes, ".fork-"+box.ID+"-"+randomSuffix())
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return providers.Guest{}, fmt.Errorf("fork: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			_ = os.RemoveAll(tmp)
		}
	}()
	if _, err := b.apply(ctx, tmp, m, nil, nil); err != nil {
		return providers.Guest{}, fmt.Errorf("fork snapshot %s: %w", m.ID, err)
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
	// The fork runs as its source does: the same command, user,
	// environment and limits (its box template's), never the defaults.
	src, _ := b.readState(m.Guest.Ref)
	if owner := b.ownerOf(m); owner != m.Guest.Ref && src.Command == "" && src.User == "" && src.Env == nil && src.Limits == (providers.BoxLimits{}) {
		src, _ = b.readState(owner) // an imported snapshot's box
	}
	st := boxState{ID: box.ID, Kind: kind, Command: src.Command, User: src.User, Env: maps.Clone(src.Env), Limits: src.Limits,
		Parent: m.ID, ForkedFrom: m.ID}
	if err := os.Rename(tmp, dst); err != nil {
		return providers.Guest{}, fmt.Errorf("fork snapshot %s: %w", m.ID, err)
	}
	ok = true
	b.mu.Lock()
	err = b.writeState(st)
	b.mu.Unlock()
	if err != nil {
		return providers.Guest{}, fmt.Errorf("fork snapshot %s: %w", m.ID, err)
	}
	return b.guestOf(box.ID, kind), nil
}

// cleanIdentity removes what sec lists (providers.Secrets: boxsnap's access
// file, the credential files of every home-like folder, a whole system's
// identity files) from a fork's folder. It never follows a link: a path
// through one is not inside the box and is left alone. It answers what it
// removed.
func cleanIdentity(dir string, sec providers.Secrets) ([]string, error) {
	var removed []string
	dirs := []string{}
	if isRealDir(dir, "root") {
		dirs = append(dirs, "root")
	}
	for _, parent := range []string{"home", "Users"} {
		if !isRealDir(dir, parent) {
			continue
		}
		ents, err := os.ReadDir(filepath.Join(dir, parent))
		if err != nil {
			return removed, err
		}
		for _, e := range ents {
			if e.IsDir() && e.Type()&fs.ModeSymlink == 0 {
				dirs = append(dirs, parent+"/"+e.Name())
			}
		}
	}
	for _, t := range sec.Targets(providers.Homes(dirs)) {
		rels := []string{t}
		if strings.Contains(t, "*") {
			rels = nil
			if parent := path.Dir(t); parent == "." || isRealDir(dir, parent) {
				matches, _ := filepath.Glob(filepath.Join(dir, filepath.FromSlash(t)))
				for _, m := range matches {
					rel, _ := filepath.Rel(dir, m)
					rels = append(rels, filepath.ToSlash(rel))
				}
			}
		}
		for _, rel := range rels {
			ok, err := removeInside(dir, rel)
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

// isRealDir says whether rel is a folder inside dir reached through no link.
func isRealDir(dir, rel string) bool {
	p := dir
	for _, part := range strings.Split(rel, "/") {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// removeInside removes rel (a file, a link or a whole folder) if every folder
// on its way is a real folder inside dir.
func removeInside(dir, rel string) (bool, error) {
	parent := filepath.Dir(filepath.FromSlash(rel))
	if parent != "." && !isRealDir(dir, filepath.ToSlash(parent)) {
		return false, nil
	}
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if _, err := os.Lstat(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	// RemoveAll removes a link itself, never what it points to.
	if err := os.RemoveAll(p); err != nil {
		return false, err
	}
	return true, nil
}
