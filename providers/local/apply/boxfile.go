package apply

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/confined"
	"github.com/boxsnap/boxsnap/providers/local/store"
	"golang.org/x/sys/unix"
)

// WriteBoxFile writes data to rel inside the box's folder: each folder on
// the way is opened beneath the box's folder with no link followed (and
// made, 0700, where missing), and the file is written under a temporary
// name and renamed over rel, so a failed write leaves what was there. A
// full disk, a read-only folder or a file where a folder should be fails
// the write, with the reason.
func (b *Writer) WriteBoxFile(ctx context.Context, g providers.Guest, rel string, data []byte, mode fs.FileMode) error {
	dir, err := b.ExistingBox(g)
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
