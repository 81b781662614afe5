package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
)

// ResetGuest makes a local box fresh again (moatbox's "Reset to a fresh
// box"): its folder is replaced by a new copy of its template folder (an
// empty folder for a box made from none), with its identity marker written
// again. It keeps running as its template says: spec's user, environment
// and limits when spec gives any, else the box's own. Its snapshots stay;
// its state forgets the last take, so the next take walks the new folder. The fresh copy is made beside the folder and
// renamed into place, so the box is never half one and half the other.
func (b *Backend) ResetGuest(ctx context.Context, g providers.Guest, spec providers.BoxSpec) error {
	dir, err := b.existingBox(g)
	if err != nil {
		return err
	}
	if err := b.Stop(ctx, g); err != nil && !errors.Is(err, providers.ErrNotFound) {
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	fresh := b.path(dirBoxes, ".reset-"+g.Ref+"-"+randomSuffix())
	if spec.Template != "" {
		src, err := b.templateDir(spec.Template)
		if err != nil {
			return err
		}
		if err := b.copyTree(ctx, src, fresh); err != nil {
			_ = os.RemoveAll(fresh)
			return fmt.Errorf("reset box %s from template %s: %w", g.Ref, spec.Template, err)
		}
	} else if err := os.Mkdir(fresh, 0o755); err != nil {
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	if err := writeIdentity(fresh, g.Ref); err != nil {
		_ = os.RemoveAll(fresh)
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	old := b.path(dirBoxes, ".reset-old-"+g.Ref+"-"+randomSuffix())
	if err := os.Rename(dir, old); err != nil {
		_ = os.RemoveAll(fresh)
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	if err := os.Rename(fresh, dir); err != nil {
		_ = os.Rename(old, dir) // put the box back as it was
		_ = os.RemoveAll(fresh)
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	if err := os.RemoveAll(old); err != nil {
		b.log.Warn("the reset box's old folder was not removed", "box", g.Ref, "folder", old, "err", err)
	}
	err = b.updateState(g.Ref, func(st *boxState) {
		st.Last, st.Parent, st.StatCache, st.ForkedFrom = "", "", "", ""
		if spec.Command != "" {
			st.Command = spec.Command
		}
		// The template's user, environment and limits, when the spec
		// gives them; else the box keeps its own: a reset never runs it
		// with the defaults in place of its template's bounds.
		if spec.User != "" || spec.Env != nil || spec.Limits != (providers.BoxLimits{}) {
			st.User, st.Env, st.Limits = spec.User, maps.Clone(spec.Env), spec.Limits
		}
	})
	if err != nil {
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	if err := os.Remove(b.statCacheFile(g.Ref)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	return nil
}

// WriteBoxFile writes data to rel inside the box's folder: each folder on
// the way is opened beneath the box's folder with no link followed (and
// made, 0700, where missing), and the file is written under a temporary
// name and renamed over rel, so a failed write leaves what was there. A
// full disk, a read-only folder or a file where a folder should be fails
// the write, with the reason.
func (b *Backend) WriteBoxFile(ctx context.Context, g providers.Guest, rel string, data []byte, mode fs.FileMode) error {
	dir, err := b.existingBox(g)
	if err != nil {
		return err
	}
	clean := path.Clean(strings.TrimPrefix(rel, "/"))
	if clean == "." || clean == ".." || strings.HasPrefix(clean, "../") || clean != rel {
		return &providers.RefusedError{Why: fmt.Sprintf("%q is not a path inside the box", rel)}
	}
	root, err := openTree(dir)
	if err != nil {
		return fmt.Errorf("open box %s: %w", g.Ref, err)
	}
	dfd, err := unix.FcntlInt(uintptr(root.fd), unix.F_DUPFD_CLOEXEC, 0)
	root.Close()
	if err != nil {
		return fmt.Errorf("open box %s: %w", g.Ref, err)
	}
	defer func() { unix.Close(dfd) }()
	parts := strings.Split(clean, "/")
	how := &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	for _, p := range parts[:len(parts)-1] {
		if err := unix.Mkdirat(dfd, p, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("write %s: make folder %s: %w", rel, p, err)
		}
		next, err := unix.Openat2(dfd, p, how)
		if err != nil {
			if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV) {
				return &providers.RefusedError{Why: fmt.Sprintf("%s goes through a link in the box, which is never followed", rel)}
			}
			return fmt.Errorf("write %s: open folder %s: %w", rel, p, err)
		}
		unix.Close(dfd)
		dfd = next
	}
	name := parts[len(parts)-1]
	tmp := ".boxsnap-login-" + randomSuffix()
	fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(mode.Perm()))
	if err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = unix.Fchmodat(dfd, tmp, uint32(mode.Perm()), 0)
	}
	if werr == nil {
		// The file is the folder's owner's, as the folder it goes into.
		var st unix.Stat_t
		if unix.Fstat(dfd, &st) == nil && os.Geteuid() == 0 {
			werr = unix.Fchownat(dfd, tmp, int(st.Uid), int(st.Gid), unix.AT_SYMLINK_NOFOLLOW)
		}
	}
	if werr == nil {
		werr = unix.Renameat(dfd, tmp, dfd, name)
	}
	if werr != nil {
		_ = unix.Unlinkat(dfd, tmp, 0)
		return fmt.Errorf("write %s: %w", rel, werr)
	}
	return nil
}
