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
	"github.com/boxsnap/boxsnap/providers/local/confined"
	"github.com/boxsnap/boxsnap/providers/local/disks"
	"github.com/boxsnap/boxsnap/providers/local/state"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// ResetGuest makes a local box fresh again (moatbox's "Reset to a fresh
// box"): its folder is replaced by a new copy of its template folder (an
// empty folder for a box made from none), with its identity marker written
// again. It keeps running as its template says: spec's user, environment
// and limits when spec gives any, else the box's own. Its snapshots stay;
// its state forgets the last take, so the next take walks the new folder.
// The fresh copy is made beside the folder (in a fresh image of the
// bound's size, where loop mounts work) and swapped into place, so the box
// is never half one and half the other.
func (b *Backend) ResetGuest(ctx context.Context, g providers.Guest, spec providers.BoxSpec) error {
	dir, err := b.existingBox(g)
	if err != nil {
		return err
	}
	if err := b.Stop(ctx, g); err != nil && !errors.Is(err, providers.ErrNotFound) {
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	cur, err := b.ReadState(g.Ref)
	if err != nil {
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	limits := cur.Limits
	if spec.User != "" || spec.Env != nil || spec.Limits != (providers.BoxLimits{}) {
		limits = spec.Limits
	}
	// The fresh box is made beside the old one, in a fresh image of its
	// template's bound where loop mounts work (so a reset also gives a box
	// made before images were a file system of its own, and a template's
	// new bound), then swapped in.
	suffix := store.RandomSuffix()
	fresh := b.Path(store.DirBoxes, ".reset-"+g.Ref+"-"+suffix)
	freshImg := b.Path(disks.DirDisks, ".reset-"+g.Ref+"-"+suffix+".img")
	image, err := b.MakeBoxFolder(ctx, fresh, freshImg, diskBound(limits, b.diskBytes))
	if err != nil {
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	if spec.Template != "" {
		src, err := b.TemplateDir(spec.Template)
		if err == nil {
			if err = b.CopyTree(ctx, src, fresh); err != nil {
				err = fmt.Errorf("reset box %s from template %s: %w", g.Ref, spec.Template, err)
			}
		}
		if err != nil {
			_ = b.RemoveBoxFolder(fresh, freshImg)
			return err
		}
	}
	if err := writeIdentity(fresh, g.Ref); err != nil {
		_ = b.RemoveBoxFolder(fresh, freshImg)
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	if image {
		err = b.SwapImage(g.Ref, dir, fresh, freshImg)
	} else {
		err = b.SwapFolder(g.Ref, dir, fresh)
	}
	if err != nil {
		return fmt.Errorf("reset box %s: %w", g.Ref, err)
	}
	err = b.UpdateState(g.Ref, func(st *state.BoxState) {
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
	if err := os.Remove(b.StatCacheFile(g.Ref)); err != nil && !errors.Is(err, fs.ErrNotExist) {
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
	root, err := confined.OpenTree(dir)
	if err != nil {
		return fmt.Errorf("open box %s: %w", g.Ref, err)
	}
	dfd, err := unix.FcntlInt(uintptr(root.Fd), unix.F_DUPFD_CLOEXEC, 0)
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
	tmp := ".boxsnap-login-" + store.RandomSuffix()
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
