package diskimage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// A box's image may hold only what the box changed over a read-only tree
// that boxes forked from one snapshot share: its folder is then an
// overlay (overlayfs), the shared tree its lower layer, the image's
// subfolder box its upper layer, and the image's subfolder work
// overlayfs's own. The image's root says so in a file (fileLower) naming
// the shared tree by its path from the image's folder, so every mount of
// the image (a restart's, a move's) mounts the same overlay. The box sees
// only the merged view: a file it writes is copied up into its image, a
// file it removes is hidden there, and nothing it does reaches the shared
// tree or another box.

// fileLower names the shared tree in an image's root; dirWork is the
// overlay's work folder beside the box's.
const (
	fileLower = "lower"
	dirWork   = "work"
)

// overlayOptions are the overlay's own options besides its layers: no
// index (a lower shared by many overlays is never tied to one upper), no
// metadata-only copy-up (a file copied up is whole in the box's image),
// and renamed folders recorded in the upper (a rename of a shared folder
// works as on any file system).
const overlayOptions = "index=off,metacopy=off,redirect_dir=on"

// OverlayOn makes the box of the fresh image img (MountFresh, its box
// bound on dir) an overlay over the shared tree lower (a path from img's
// folder): the bind unmounted, the image's root told its lower, and the
// overlay mounted on dir. The upper takes lower's root's mode, owner and
// times, so the merged view's root is the shared tree's. On failure the
// image's box is bound on dir again, as it was.
func OverlayOn(img, dir, lower string) error {
	fsd := FSDirOf(img)
	if !IsMounted(fsd) {
		return fmt.Errorf("overlay on %s: its image is not mounted", dir)
	}
	abs := filepath.Join(filepath.Dir(img), lower)
	if err := usablePath(abs); err != nil {
		return err
	}
	upper := filepath.Join(fsd, dirBoxInImage)
	if err := sameRoot(abs, upper); err != nil {
		return fmt.Errorf("overlay on %s: %w", dir, err)
	}
	if err := unmountOne(dir); err != nil {
		return err
	}
	err := os.Mkdir(filepath.Join(fsd, dirWork), 0o700)
	if errors.Is(err, fs.ErrExist) {
		err = nil
	}
	if err == nil {
		err = writeLower(fsd, lower)
	}
	if err == nil {
		err = mountOverlay(fsd, abs, dir)
	}
	if err != nil {
		_ = os.Remove(filepath.Join(fsd, fileLower))
		_ = unix.Mount(upper, dir, "", unix.MS_BIND, "")
		return err
	}
	return nil
}

// writeLower writes the image's lower file whole or not at all.
func writeLower(fsd, lower string) error {
	tmp := filepath.Join(fsd, fileLower+".making")
	if err := os.WriteFile(tmp, []byte(lower+"\n"), 0o600); err != nil {
		return fmt.Errorf("record the shared tree: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(fsd, fileLower)); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("record the shared tree: %w", err)
	}
	return nil
}

// sameRoot gives upper the mode, owner and times of lower's root.
func sameRoot(lower, upper string) error {
	var st unix.Stat_t
	if err := unix.Lstat(lower, &st); err != nil {
		return fmt.Errorf("the shared tree: %w", err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return fmt.Errorf("the shared tree %s is not a folder", lower)
	}
	if err := unix.Lchown(upper, int(st.Uid), int(st.Gid)); err != nil {
		return err
	}
	if err := unix.Chmod(upper, st.Mode&0o7777); err != nil {
		return err
	}
	ts := []unix.Timespec{st.Atim, st.Mtim}
	return unix.UtimesNanoAt(unix.AT_FDCWD, upper, ts, unix.AT_SYMLINK_NOFOLLOW)
}

// LowerOf is the shared tree the image img lies over when mounted (an
// absolute path), or "" for an image whose box is its own.
func LowerOf(img string) string {
	data, err := os.ReadFile(filepath.Join(FSDirOf(img), fileLower))
	if err != nil {
		return ""
	}
	rel := strings.TrimSpace(string(data))
	if rel == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(img), rel)
}

// UpperOf is the upper layer of the overlay mounted on dir, what the box
// alone holds, and the shared tree it lies over; "" for a folder that is
// no overlay.
func UpperOf(dir string) (upper, lower string) {
	fsd := MountOf(dir)
	if fsd == "" {
		return "", ""
	}
	lower = LowerOf(strings.TrimSuffix(fsd, ".fs") + ".img")
	if lower == "" {
		return "", ""
	}
	return filepath.Join(fsd, dirBoxInImage), lower
}

// mountOverlay mounts the overlay of the image mounted at fsd over lower
// on dir.
func mountOverlay(fsd, lower, dir string) error {
	upper, work := filepath.Join(fsd, dirBoxInImage), filepath.Join(fsd, dirWork)
	for _, p := range []string{lower, upper, work} {
		if err := usablePath(p); err != nil {
			return err
		}
	}
	opts := "lowerdir=" + lower + ",upperdir=" + upper + ",workdir=" + work + "," + overlayOptions
	if err := unix.Mount("overlay", dir, "overlay", 0, opts); err != nil {
		return fmt.Errorf("mount an overlay on %s: %w", dir, err)
	}
	return nil
}

// usablePath refuses a path overlayfs's options cannot name as it is
// (they are split at commas and colons).
func usablePath(p string) error {
	if strings.ContainsAny(p, ",:\\\n") {
		return fmt.Errorf("an overlay cannot name %q: its data folder's path holds a comma, a colon or a backslash", p)
	}
	return nil
}

// upperOfOverlay is the upper layer of the overlay mounted on dir, read
// from a mount table line's super options, or "".
func upperOfOverlay(fields []string) string {
	sep := -1
	for i, f := range fields {
		if f == "-" {
			sep = i
			break
		}
	}
	if sep < 0 || len(fields) < sep+4 || fields[sep+1] != "overlay" {
		return ""
	}
	for _, opt := range strings.Split(fields[sep+3], ",") {
		if v, ok := strings.CutPrefix(opt, "upperdir="); ok {
			return unescape(v)
		}
	}
	return ""
}
