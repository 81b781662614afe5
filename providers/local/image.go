package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
)

// A box's disk bound is exact where the host allows loop mounts: the box's
// folder is an ext4 file system of its own, in an image file of the bound's
// size, so a write past the bound fails in the box (ENOSPC) and nothing
// already written is lost, as LXD's and Incus's loop-backed pools do. The
// image takes room on the host as the box fills, and a full host never
// turns it read-only (room.go). Elsewhere a watch measures the folder
// (disk.go).

// dirDisks holds each box's image, disks/<boxID>.img, outside boxes/: a
// take reads the mounted folder, never the image.
const dirDisks = "disks"

// fileMountLock is the flock every boxsnap process on this data folder
// holds while it mounts or unmounts a box's image, so two of them never
// mount one image twice, and a swap of images (a reset) is never seen
// half-way.
const fileMountLock = "disks/mount.lock"

// fullMargin is the free room below which a box's own file system counts as
// full: a write asking for more than what is left fails, and ext4 keeps a
// little back for its own blocks.
const fullMargin = 1 << 20

// mountOptions mount a box's image: a loop device freed at the unmount
// (mount(8) sets autoclear for -o loop), and no zeroing of the inode tables
// behind the box's back (noinit_itable), which reads of the image's
// unwritten blocks as zeros make needless. Never discard: the room a box
// frees would go back to the host as holes, and a write into a hole fails
// when the host's disk is full (room.go).
const mountOptions = "loop,noinit_itable"

func (b *Backend) imageFile(box string) string { return b.path(dirDisks, box+".img") }

// hasImage says whether the box's folder is the mount point of its own
// file system (a box made before images were, or where a loop mount is
// not possible, has a plain folder).
func (b *Backend) hasImage(box string) bool {
	_, err := os.Lstat(b.imageFile(box))
	return err == nil
}

// DiskBounding says how a new box's disk is bounded here: exact, by a file
// system of its own (a loop-mounted image), or else by the watch, with why
// and the fix. It probes once per backend, and the log says which at the
// first use.
func (b *Backend) DiskBounding() (exact bool, why, fix string) {
	b.loopOnce.Do(func() {
		if !b.diskImages {
			b.loopWhy, b.loopFix = "each box's folder is part of the host's file system (the default)", "set BOXSNAP_LOCAL_DISK_IMAGES=true for a file system of its own per box, bounded to the byte (as root; a full host disk then turns a box's file system read-only until it is mounted again: a host restart, or the box's reset)"
		} else {
			b.loopWhy, b.loopFix = ProbeLoop(b.path(dirDisks))
		}
		switch {
		case b.loopWhy == "":
			b.log.Info("local backend: each new box's disk is bounded to the byte by a file system of its own (a loop-mounted ext4 image in " + b.path(dirDisks) + ")")
		case !b.diskImages:
			b.log.Info("local backend: a box's disk is bounded by a watch that measures its folder, not to the byte, because "+b.loopWhy, "or", b.loopFix)
		default:
			b.log.Warn("local backend: a box's disk is bounded by a watch that measures its folder, not to the byte, because "+b.loopWhy, "fix", b.loopFix)
		}
	})
	return b.loopWhy == "", b.loopWhy, b.loopFix
}

// ProbeLoop says why a box's folder under dir's data folder cannot be a
// loop-mounted file system of its own ("" when it can), and the fix. It
// tries one: a small image made, mounted and unmounted in dir.
func ProbeLoop(dir string) (why, fix string) {
	if os.Geteuid() != 0 {
		return "boxsnap does not run as root, and a loop mount needs root", "run boxsnap as root on the host"
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		return "this host has no /dev/loop-control (as in an unprivileged container)", "load the loop module (modprobe loop), or give boxsnap's container the loop devices"
	}
	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		return "mkfs.ext4 is not installed", "install e2fsprogs (apt-get install e2fsprogs)"
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "its folder " + dir + " cannot be made: " + err.Error(), "choose a data folder boxsnap can write"
	}
	base := filepath.Join(dir, ".probe-"+randomSuffix())
	img, mnt := base+".img", base
	defer os.Remove(img)
	defer os.Remove(mnt)
	if err := makeImage(context.Background(), img, 2<<20); err != nil {
		return "an image cannot be made: " + err.Error(), "install e2fsprogs, and give boxsnap a data folder it can write"
	}
	if err := os.Mkdir(mnt, 0o700); err != nil {
		return "a mount point cannot be made: " + err.Error(), "give boxsnap a data folder it can write"
	}
	if err := mountFresh(img, mnt); err != nil {
		return "a loop mount was refused: " + err.Error(), "run boxsnap where it may mount loop devices (root on the host, or a privileged container), on a file system that allocates room ahead (fallocate: ext4, XFS, tmpfs)"
	}
	if err := unmount(mnt); err != nil {
		return "a loop mount could not be unmounted: " + err.Error(), "check the host's mounts (findmnt " + mnt + ")"
	}
	return "", ""
}

// makeImage writes a sparse image file of size bytes at img holding an
// empty ext4 file system labelled as holding room (room.go): no room kept
// back for root (-m 0), and neither discarded nor zeroed at its making,
// since a sparse file's holes read as zeros already.
func makeImage(ctx context.Context, img string, size int64) error {
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
	args := []string{"-q", "-F", "-m", "0", "-L", labelRoom, "-E", "nodiscard,lazy_itable_init=1,lazy_journal_init=1"}
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

// mountImage mounts img on the folder dir, through a loop device freed at
// the unmount: the image on its own folder beside it (fsDirOf), and its
// subfolder box bound on dir (the image's root, for an image made before
// images held room).
func mountImage(img, dir string) error {
	fsd, err := mountFS(img)
	if err != nil {
		return err
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
	fsd := fsDirOf(img)
	if err := os.Mkdir(fsd, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("mount %s: %w", img, err)
	}
	if isMounted(fsd) {
		return fsd, nil
	}
	if out, err := exec.Command("mount", "-o", mountOptions, img, fsd).CombinedOutput(); err != nil {
		_ = os.Remove(fsd)
		return "", fmt.Errorf("mount %s: %w: %s", img, err, strings.TrimSpace(string(out)))
	}
	return fsd, nil
}

// unmount unmounts whatever is mounted on dir, and the image's own mount
// beside it when dir is its box bound there (its folder removed): each at
// once where nothing holds it, else detached (it goes, and its loop device
// with it, when the last file open in it is closed). A folder with nothing
// mounted is left as is.
func unmount(dir string) error {
	fsd := imageMountOf(dir)
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

// imageMountOf is where the image whose file system is mounted on dir is
// mounted on its own folder (a folder named .fs, other than dir), or "".
func imageMountOf(dir string) string {
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
		m := mount{f[2], unescapeMount(f[4])}
		all = append(all, m)
		if m.at == dir {
			dev = m.dev
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

// isMounted says whether dir is a mount point: its device differs from its
// parent folder's.
func isMounted(dir string) bool {
	var st, parent unix.Stat_t
	if unix.Lstat(dir, &st) != nil || unix.Lstat(filepath.Dir(dir), &parent) != nil {
		return false
	}
	return st.Dev != parent.Dev
}

// lockMounts takes the flock every boxsnap process on this data folder
// holds to mount or unmount a box's image.
func (b *Backend) lockMounts() (func(), error) {
	f, err := os.OpenFile(b.path(fileMountLock), os.O_RDWR|os.O_CREATE|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("the disks' lock: %w", err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("the disks' lock: %w", err)
	}
	return func() { f.Close() }, nil
}

// ensureMounted mounts the box's image on its folder when the box has one
// and it is not mounted (after a host's restart the mounts are gone). Any
// number of boxsnap processes may call it at once: the mount is made once,
// under the disks' lock. A folder that holds files while its image is not
// mounted is left alone, with an error: a mount would hide them; a missing
// folder (a box being released) is left missing.
func (b *Backend) ensureMounted(box string) error {
	img, dir := b.imageFile(box), b.boxDir(box)
	if _, err := os.Lstat(img); err != nil || isMounted(dir) {
		return nil
	}
	unlock, err := b.lockMounts()
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := os.Lstat(img); err != nil || isMounted(dir) {
		return nil // another process mounted it, or a release removed it
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // no box: an image a release could not remove is never mounted again
	}
	if err == nil && len(ents) > 0 {
		return fmt.Errorf("box %s's folder %s holds files while its disk image %s is not mounted on it; a mount would hide them: move them out, then use the box again", box, dir, img)
	}
	if err := mountImage(img, dir); err != nil {
		return fmt.Errorf("box %s: %w", box, err)
	}
	b.log.Info("local backend: a box's disk image was mounted again on its folder", "box", box)
	b.startGrowing()
	return nil
}

// MountImages mounts every box's image that is not mounted, as at boxsnap's
// start after a host's restart; a box it cannot mount is logged and left.
// The first call also says in the log how a new box's disk is bounded.
func (b *Backend) MountImages() {
	b.DiskBounding()
	ents, err := os.ReadDir(b.path(dirDisks))
	if err != nil {
		return
	}
	b.startGrowing()
	for _, e := range ents {
		box, ok := strings.CutSuffix(e.Name(), ".img")
		if !ok || checkID("box", box) != nil {
			continue
		}
		if _, err := os.Lstat(b.stateFile(box)); err != nil {
			continue // a box being made or released
		}
		if err := b.ensureMounted(box); err != nil {
			b.log.Error("local backend: a box's disk image could not be mounted", "box", box, "err", err)
		}
	}
}

// makeBoxFolder makes the empty folder dir for a new box with the given
// disk bound: the mount point of a fresh image at img where loop mounts
// work, else a plain folder. It answers whether it made an image; on
// failure nothing is left.
func (b *Backend) makeBoxFolder(ctx context.Context, dir, img string, bound int64) (bool, error) {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return false, err
	}
	if exact, _, _ := b.DiskBounding(); !exact {
		return false, nil
	}
	if err := makeImage(ctx, img, bound); err != nil {
		_ = os.Remove(dir)
		return false, err
	}
	unlock, err := b.lockMounts()
	if err == nil {
		err = mountFresh(img, dir)
		unlock()
	}
	if err != nil {
		_ = os.Remove(img)
		_ = os.Remove(dir)
		return false, err
	}
	b.startGrowing()
	return true, nil
}

// mountFresh mounts the fresh image img, holding all its room but
// roomAhead (room.go), its subfolder box on the folder dir; on failure
// nothing is mounted. Its lost+found stays in its root, beside the box.
func mountFresh(img, dir string) error {
	fsd, err := mountFS(img)
	if err != nil {
		return err
	}
	if err = os.Mkdir(filepath.Join(fsd, dirBoxInImage), 0o755); err == nil {
		err = holdRoom(fsd, img)
	}
	if err == nil {
		return mountImage(img, dir)
	}
	_ = unmountOne(fsd)
	_ = os.Remove(fsd)
	return err
}

// removeBoxFolder removes a box's folder and its image: unmounted and the
// image removed under the disks' lock, so no boxsnap process mounts it
// again in between, then the folder it was mounted on.
func (b *Backend) removeBoxFolder(dir, img string) error {
	if _, err := os.Lstat(img); err == nil || isMounted(dir) {
		unlock, err := b.lockMounts()
		if err != nil {
			return err
		}
		err = unmount(dir)
		if err == nil {
			if rerr := os.Remove(img); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
				err = rerr
			}
		}
		unlock()
		if err != nil {
			return err
		}
	}
	return os.RemoveAll(dir)
}

// boxRoom is what the box's own file system holds, by statfs: its room
// for files (what ext4 gives to files, less what it keeps back), what is
// free of it now, and what its held room holds (room.go), given to it as
// it fills.
type boxRoom struct {
	capacity, free, held int64
	noInodes             bool
}

func roomOf(dir string) (boxRoom, error) {
	var s unix.Statfs_t
	if err := unix.Statfs(dir, &s); err != nil {
		return boxRoom{}, err
	}
	bs := int64(s.Bsize)
	r := boxRoom{
		capacity: (int64(s.Blocks) - int64(s.Bfree) + int64(s.Bavail)) * bs,
		free:     int64(s.Bavail) * bs,
		noInodes: s.Files > 0 && s.Ffree == 0,
	}
	if fsd := imageMountOf(dir); fsd != "" {
		r.held = heldRoom(fsd)
	}
	return r, nil
}

// full says whether a write in the box fails for want of room now: at its
// bound, or, with room still held, when the host's disk is full.
func (r boxRoom) full() bool { return r.free < fullMargin || r.noInodes }

// atBound says whether the box's room is all given: a full box is full at
// its bound, not for want of room on the host.
func (r boxRoom) atBound() bool { return r.held == 0 }

// used is what the box's files hold of its room.
func (r boxRoom) used() int64 { return r.capacity - r.free - r.held }

// fitsWords refuses, in words, a restore or a fork of a snapshot whose files
// hold more than room bytes (what the box's disk bound leaves for files),
// before anything is written; nil when they fit.
func fitsWords(m *manifest, room int64) error {
	if m.Bytes <= room {
		return nil
	}
	return &providers.RefusedError{Why: fmt.Sprintf("The snapshot's files hold %s, more than the box's disk bound leaves for its files (%s): nothing was written. Raise the disk bound in its template and reset the box, or choose a smaller snapshot.",
		mib(m.Bytes), mib(room))}
}

// mib says a size in MiB, to a tenth.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// moveImage moves a box's file system made under temporary names (the
// image img mounted on the folder dir) to the box's own names: unmounted,
// the image renamed to toImg, the folder to, and mounted there. On failure
// the file system is back where it was.
func (b *Backend) moveImage(dir, img, to, toImg string) error {
	unlock, err := b.lockMounts()
	if err != nil {
		return err
	}
	defer unlock()
	if err := unmount(dir); err != nil {
		return err
	}
	back := func(err error) error {
		_ = mountImage(img, dir)
		return err
	}
	if err := os.Rename(dir, to); err != nil {
		return back(err)
	}
	if err := os.Rename(img, toImg); err != nil {
		_ = os.Rename(to, dir)
		return back(err)
	}
	if err := mountImage(toImg, to); err != nil {
		_ = os.Rename(toImg, img)
		_ = os.Rename(to, dir)
		return back(err)
	}
	return nil
}

// UnmountAll unmounts every file system mounted under root (a data
// folder's boxes that are file systems of their own), detached, so root
// can be removed. boxsnap never calls it, since every boxsnap process on a
// data folder shares its mounts: a test or a tool that removes a data
// folder calls it first.
func UnmountAll(root string) error {
	abs, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	var under []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mp := unescapeMount(f[4])
		if strings.HasPrefix(mp, abs+"/") {
			under = append(under, mp)
		}
	}
	var first error
	// The deepest first: one mounted inside another goes before it.
	for i := len(under) - 1; i >= 0; i-- {
		if err := unix.Unmount(under[i], unix.MNT_DETACH); err != nil && first == nil && !errors.Is(err, unix.EINVAL) {
			first = fmt.Errorf("unmount %s: %w", under[i], err)
		}
	}
	return first
}
