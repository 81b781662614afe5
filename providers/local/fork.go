package local

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

// homeCredentials are the sign-in and key files moatbox removes from "/root
// and each home folder" before a share code works (moatbox-snapshots.md,
// "Share codes"), and BB's own (section 9): a fork never carries them.
func homeCredentials() []string {
	return []string{
		".claude/.credentials.json", ".claude.json", ".codex/auth.json",
		".local/share/opencode/auth.json", ".config/gh/hosts.yml", ".git-credentials",
		".netrc", ".npmrc", ".pypirc", ".docker/config.json", ".aws/credentials",
		".aws/config", ".config/gcloud", ".kube/config", ".ssh",
		".bb-machines", ".config/bb-box/env",
	}
}

// rootIdentity are files of a box whose folder is a whole system: its SSH
// host keys, machine ID and Tailscale state are made new by its image.
func rootIdentity() []string {
	return []string{"etc/machine-id", "var/lib/tailscale", "var/lib/dbus/machine-id"}
}

// ForkSnapshot makes a new box folder from a snapshot and cleans it of its
// source's identity before its first start (section 9): the identity marker
// names the new box; the credential files moatbox's share codes remove, in the
// box's folder and in every home-like folder inside it, and the box's access
// file, are removed. A snapshot taken with no identity reset is refused.
func (b *Backend) ForkSnapshot(ctx context.Context, ref providers.SnapshotRef, box providers.BoxIdentity, rec providers.Recorder) (providers.Guest, error) {
	m, err := b.loadUsable(ref)
	if err != nil {
		return providers.Guest{}, fmt.Errorf("fork: %w", err)
	}
	if m.ResetVersion == 0 {
		return providers.Guest{}, &providers.RefusedError{Why: fmt.Sprintf("Taken before %s's image had the identity reset", m.Guest.Ref)}
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
	if _, err := b.apply(ctx, tmp, m, nil); err != nil {
		return providers.Guest{}, fmt.Errorf("fork snapshot %s: %w", m.ID, err)
	}
	if _, err := cleanIdentity(tmp); err != nil {
		return providers.Guest{}, fmt.Errorf("fork snapshot %s: clean its identity: %w", m.ID, err)
	}
	if err := writeIdentity(tmp, box.ID); err != nil {
		return providers.Guest{}, fmt.Errorf("fork snapshot %s: %w", m.ID, err)
	}
	kind := box.Kind
	if kind == "" {
		kind = m.Guest.Kind
	}
	src, _ := b.readState(m.Guest.Ref)
	st := boxState{ID: box.ID, Kind: kind, Command: src.Command, Parent: m.ID, ForkedFrom: m.ID}
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

// cleanIdentity removes a fork's access file, the credential files of every
// home-like folder (the box's folder, root, and each folder under home and
// Users) and a whole system's identity files. It never follows a link: a
// path through one is not inside the box and is left alone. It answers what
// it removed.
func cleanIdentity(dir string) ([]string, error) {
	var removed []string
	rm := func(rel string) error {
		ok, err := removeInside(dir, rel)
		if ok {
			removed = append(removed, rel)
		}
		return err
	}
	if err := rm(accessFile); err != nil {
		return removed, err
	}
	homes := []string{"", "root"}
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
				homes = append(homes, parent+"/"+e.Name())
			}
		}
	}
	for _, h := range homes {
		if h != "" && !isRealDir(dir, h) {
			continue
		}
		for _, c := range homeCredentials() {
			if err := rm(strings.TrimPrefix(h+"/"+c, "/")); err != nil {
				return removed, err
			}
		}
	}
	for _, c := range rootIdentity() {
		if err := rm(c); err != nil {
			return removed, err
		}
	}
	if isRealDir(dir, "etc/ssh") {
		keys, _ := filepath.Glob(filepath.Join(dir, "etc", "ssh", "ssh_host_*"))
		for _, k := range keys {
			rel, _ := filepath.Rel(dir, k)
			if err := rm(filepath.ToSlash(rel)); err != nil {
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
