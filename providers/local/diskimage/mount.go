package diskimage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// mountOptions mount a box's image: a loop device freed at the unmount
// (mount(8) sets autoclear for -o loop), and no zeroing of the inode tables
// behind the box's back (noinit_itable), which reads of the image's
// unwritten blocks as zeros make needless. Never discard: the room a box
// frees would go back to the host as holes, and a write into a hole fails
// when the host's disk is full (room.go).
const mountOptions = "loop,noinit_itable"

// Make writes a sparse image file of size bytes at img holding an empty
// ext4 file system labelled as holding room (room.go): no room kept back
// for root (-m 0), and neither discarded nor zeroed at its making, since a
// sparse file's holes read as zeros already.
func Make(ctx context.Context, img string, size int64) error {
	f, err := os.OpenFile(img, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("make the disk image: %w", err)
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(img)
		return fmt.Errorf("make the disk image: %w", err)
	}
	// No blocks kept back for growing the file system (^resize_inode): an
	// image is never resized, and they would be allocated on the host at
	// once (44 MiB of 16 GiB).
	args := []string{"-q", "-F", "-m", "0", "-O", "^resize_inode", "-L", labelRoom, "-E", "nodiscard,lazy_itable_init=1,lazy_journal_init=1",
		"-N", strconv.FormatInt(Inodes(size), 10)}
	if size >= 1<<30 {
		// The journal is allocated on the host from the start: 16 MiB, not
		// the 64 MiB mkfs gives 16 GiB.
		args = append(args, "-J", "size=16")
	}
	if out, err := exec.CommandContext(ctx, "mkfs.ext4", append(args, img)...).CombinedOutput(); err != nil {
		_ = os.Remove(img)
		return fmt.Errorf("make the disk image's file system: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Inodes is how many files (and folders, and links) an image of size bytes
// holds: one per 64 KiB of it, and at least 65,536 where it has a 4 KiB
// block for each, so 262,144 for 16 GiB. Each inode takes 256 bytes of the
// image, all allocated on the host at its making: ext4's default of one per
// 16 KiB gave a 16 GiB image 256 MiB of inode tables, most of what it took
// on the host at once, for a million files few boxes hold.
func Inodes(size int64) int64 {
	return max(size/(64<<10), min(65536, size/(4<<10)))
}

// UpFront is about how much of the host an image of size bytes takes at
// its making, before the box writes anything: its inode tables (256 bytes
// each), its journal (16 MiB; 4 MiB under 128 MiB, as mkfs gives), the
// room held ahead of the box's writes, and a share of its size for the
// group bitmaps and the held room's extents (measured: 94 MiB for 256 MiB,
// 167 MiB for 16 GiB).
func UpFront(size int64) int64 {
	journal := int64(16 << 20)
	if size < 128<<20 {
		journal = 4 << 20
	}
	return Inodes(size)*256 + journal + roomAhead + size/1024
}

// Mount mounts img on the folder dir, through a loop device freed at the
// unmount: the image on its own folder beside it (FSDirOf), and its
// subfolder box bound on dir (the image's root, for an image made before
// images held room), or the overlay of it over its shared tree where its
// root names one (OverlayOn).
func Mount(img, dir string) error {
	fsd, err := mountFS(img)
	if err != nil {
		return err
	}
	if lower := LowerOf(img); lower != "" {
		if err := mountOverlay(fsd, lower, dir); err != nil {
			_ = unmountOne(fsd)
			_ = os.Remove(fsd)
			return err
		}
		return nil
	}
	src := fsd
	if hasHeldRoom(img) {
		src = filepath.Join(fsd, dirBoxInImage)
	}
	if err := unix.Mount(src, dir, "", unix.MS_BIND, ""); err != nil {
		_ = unmountOne(fsd)
		_ = os.Remove(fsd)
		return fmt.Errorf("mount %s on %s: %w", src, dir, err)
	}
	return nil
}

// mountFS mounts img on its own folder beside it, unless it is mounted
// there, and answers that folder.
func mountFS(img string) (string, error) {
	fsd := FSDirOf(img)
	if err := os.Mkdir(fsd, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("mount %s: %w", img, err)
	}
	if IsMounted(fsd) {
		return fsd, nil
	}
	if out, err := exec.Command("mount", "-o", mountOptions, img, fsd).CombinedOutput(); err != nil {
		_ = os.Remove(fsd)
		return "", fmt.Errorf("mount %s: %w: %s", img, err, strings.TrimSpace(string(out)))
	}
	return fsd, nil
}

// MountFresh mounts the fresh image img (Make), holding all its room but
// roomAhead (room.go), its subfolder box on the folder dir; on failure
// nothing is mounted. Its lost+found stays in its root, beside the box.
// A host without room for what the image takes at once answers a
// *NoRoomError.
func MountFresh(img, dir string) error {
	fsd, err := mountFS(img)
	if err != nil {
		return err
	}
	if err = os.Mkdir(filepath.Join(fsd, dirBoxInImage), 0o755); err == nil {
		err = holdRoom(fsd, img)
	}
	if err == nil {
		return Mount(img, dir)
	}
	_ = unmountOne(fsd)
	_ = os.Remove(fsd)
	return err
}

// Unmount unmounts whatever is mounted on dir, and the image's own mount
// beside it when dir is its box bound there (its folder removed): each at
// once where nothing holds it, else detached (it goes, and its loop device
// with it, when the last file open in it is closed). A folder with nothing
// mounted is left as is.
func Unmount(dir string) error {
	fsd := MountOf(dir)
	if err := unmountOne(dir); err != nil {
		return err
	}
	if fsd == "" {
		return nil
	}
	if err := unmountOne(fsd); err != nil {
		return err
	}
	_ = os.Remove(fsd)
	return nil
}

// unmountOne unmounts what is mounted on dir, detached when it is busy.
func unmountOne(dir string) error {
	err := unix.Unmount(dir, 0)
	if errors.Is(err, unix.EBUSY) {
		err = unix.Unmount(dir, unix.MNT_DETACH)
	}
	if errors.Is(err, unix.EINVAL) || errors.Is(err, fs.ErrNotExist) {
		return nil // not a mount point
	}
	if err != nil {
		return fmt.Errorf("unmount %s: %w", dir, err)
	}
	return nil
}

// MountOf is where the image whose file system is mounted on dir is
// mounted on its own folder (a folder named .fs, other than dir), or "";
// for an overlay on dir, the folder its upper layer is in. The mount table
// names folders through no link: dir is read so too.
func MountOf(dir string) string {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	var dev string
	type mount struct{ dev, at string }
	var all []mount
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		m := mount{f[2], unescape(f[4])}
		all = append(all, m)
		if m.at == dir {
			dev = m.dev
			if up := upperOfOverlay(f); up != "" && strings.HasSuffix(filepath.Dir(up), ".fs") {
				return filepath.Dir(up)
			}
		}
	}
	if dev == "" {
		return ""
	}
	for _, m := range all {
		if m.dev == dev && m.at != dir && strings.HasSuffix(m.at, ".fs") {
			return m.at
		}
	}
	return ""
}

// IsMounted says whether dir is a mount point: its device differs from its
// parent folder's.
func IsMounted(dir string) bool {
	var st, parent unix.Stat_t
	if unix.Lstat(dir, &st) != nil || unix.Lstat(filepath.Dir(dir), &parent) != nil {
		return false
	}
	return st.Dev != parent.Dev
}

// unescape undoes /proc/self/mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				out.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		out.WriteByte(s[i])
	}
	return out.String()
}
