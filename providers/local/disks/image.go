package disks

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
	"github.com/boxsnap/boxsnap/providers/local/diskimage"
	"github.com/boxsnap/boxsnap/providers/local/process"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// A box's disk bound is exact where the host allows loop mounts: the box's
// folder is an ext4 file system of its own, in an image file of the bound's
// size, so a write past the bound fails in the box (ENOSPC) and nothing
// already written is lost, as LXD's and Incus's loop-backed pools do. The
// image takes room on the host as the box fills, and a full host never
// turns it read-only (diskimage). Elsewhere a watch measures the folder
// (package local's disk.go).

// DirDisks holds each box's image, disks/<boxID>.img, outside boxes/: a
// take reads the mounted folder, never the image.
const DirDisks = "disks"

// fileMountLock is the flock every boxsnap process on this data folder
// holds while it mounts or unmounts a box's image, so two of them never
// mount one image twice, and a swap of images (a reset) is never seen
// half-way.
const fileMountLock = "disks/mount.lock"

// fullMargin is the free room below which a box's own file system counts as
// full: a write asking for more than what is left fails, and ext4 keeps a
// little back for its own blocks.
const fullMargin = 1 << 20

func (b *Disks) ImageFile(box string) string { return b.Path(DirDisks, box+".img") }

// HasImage says whether the box's folder is the mount point of its own
// file system (a box made before images were, or where a loop mount is
// not possible, has a plain folder).
func (b *Disks) HasImage(box string) bool {
	_, err := os.Lstat(b.ImageFile(box))
	return err == nil
}

// DiskBounding says how a new box's disk is bounded here: exact, by a file
// system of its own (a loop-mounted image), or else by the watch, with why
// and the fix. It probes once per backend, and the log says which at the
// first use.
func (b *Disks) DiskBounding() (exact bool, why, fix string) {
	b.loopOnce.Do(func() {
		if !b.DiskImages {
			b.loopWhy, b.loopFix = "disk images are turned off (BOXSNAP_LOCAL_DISK_IMAGES=false)", "unset BOXSNAP_LOCAL_DISK_IMAGES for a file system of its own per box, bounded to the byte (as root; each image takes room on the host at once, about 170 MiB for a 16 GiB bound)"
		} else {
			b.loopWhy, b.loopFix = ProbeLoop(b.Path(DirDisks))
		}
		switch {
		case b.loopWhy == "":
			b.Log.Info("local backend: each new box's disk is bounded to the byte by a file system of its own (a loop-mounted ext4 image in " + b.Path(DirDisks) + ")")
		case !b.DiskImages:
			b.Log.Info("local backend: a box's disk is bounded by a watch that measures its folder, not to the byte, because "+b.loopWhy, "or", b.loopFix)
		default:
			b.Log.Warn("local backend: a box's disk is bounded by a watch that measures its folder, not to the byte, because "+b.loopWhy, "fix", b.loopFix)
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
	base := filepath.Join(dir, ".probe-"+store.RandomSuffix())
	img, mnt := base+".img", base
	defer os.Remove(img)
	defer os.Remove(mnt)
	if err := diskimage.Make(context.Background(), img, 2<<20); err != nil {
		return "an image cannot be made: " + err.Error(), "install e2fsprogs, and give boxsnap a data folder it can write"
	}
	if err := os.Mkdir(mnt, 0o700); err != nil {
		return "a mount point cannot be made: " + err.Error(), "give boxsnap a data folder it can write"
	}
	if err := diskimage.MountFresh(img, mnt); err != nil {
		return "a loop mount was refused: " + err.Error(), "run boxsnap where it may mount loop devices (root on the host, or a privileged container), on a file system that allocates room ahead (fallocate: ext4, XFS, tmpfs)"
	}
	if err := Unmount(mnt); err != nil {
		return "a loop mount could not be unmounted: " + err.Error(), "check the host's mounts (findmnt " + mnt + ")"
	}
	return "", ""
}

// MountImage mounts img on the folder dir (diskimage.Mount).
func MountImage(img, dir string) error { return diskimage.Mount(img, dir) }

// Unmount unmounts dir and the image's own mount beside it
// (diskimage.Unmount).
func Unmount(dir string) error { return diskimage.Unmount(dir) }

// IsMounted says whether dir is a mount point (diskimage.IsMounted).
func IsMounted(dir string) bool { return diskimage.IsMounted(dir) }

// LockMounts takes the flock every boxsnap process on this data folder
// holds to mount or unmount a box's image.
func (b *Disks) LockMounts() (func(), error) { return LockMountsIn(b.Root) }

// LockMountsIn takes the disks' lock of the data folder root (LockMounts).
func LockMountsIn(root string) (func(), error) {
	return store.LockFile(filepath.Join(root, fileMountLock), "the disks' lock")
}

// EnsureMounted mounts the box's image on its folder when the box has one
// and it is not mounted (after a host's restart the mounts are gone). Any
// number of boxsnap processes may call it at once: the mount is made once,
// under the disks' lock. A folder that holds files while its image is not
// mounted is left alone, with an error: a mount would hide them; a missing
// folder (a box being released) is left missing.
func (b *Disks) EnsureMounted(box string) error {
	img, dir := b.ImageFile(box), b.Store.BoxDir(box)
	if _, err := os.Lstat(img); err != nil || IsMounted(dir) {
		return nil
	}
	unlock, err := b.LockMounts()
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := os.Lstat(img); err != nil || IsMounted(dir) {
		return nil // another process mounted it, or a release removed it
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // no box: an image a release could not remove is never mounted again
	}
	if err == nil && len(ents) > 0 {
		return fmt.Errorf("box %s's folder %s holds files while its disk image %s is not mounted on it; a mount would hide them: move them out, then use the box again", box, dir, img)
	}
	if err := MountImage(img, dir); err != nil {
		return fmt.Errorf("box %s: %w", box, err)
	}
	b.Log.Info("local backend: a box's disk image was mounted again on its folder", "box", box)
	b.Grow.Start(b.Path(DirDisks), b.Log)
	return nil
}

// MountImages mounts every box's image that is not mounted, as at boxsnap's
// start after a host's restart; a box it cannot mount is logged and left.
// The first call also says in the log how a new box's disk is bounded.
func (b *Disks) MountImages() {
	b.DiskBounding()
	ents, err := os.ReadDir(b.Path(DirDisks))
	if err != nil {
		return
	}
	b.Grow.Start(b.Path(DirDisks), b.Log)
	for _, e := range ents {
		box, ok := strings.CutSuffix(e.Name(), ".img")
		if !ok || store.CheckID("box", box) != nil {
			continue
		}
		if _, err := os.Lstat(b.StateFile(box)); err != nil {
			continue // a box being made or released
		}
		if err := b.EnsureMounted(box); err != nil {
			b.Log.Error("local backend: a box's disk image could not be mounted", "box", box, "err", err)
		}
	}
}

// MakeBoxFolder makes the empty folder dir for a new box with the given
// disk bound: the mount point of a fresh image at img where loop mounts
// work, else a plain folder. It answers whether it made an image; on
// failure nothing is left.
func (b *Disks) MakeBoxFolder(ctx context.Context, dir, img string, bound int64) (bool, error) {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return false, err
	}
	if exact, _, _ := b.DiskBounding(); !exact {
		return false, nil
	}
	if err := diskimage.Make(ctx, img, bound); err != nil {
		_ = os.Remove(dir)
		return false, err
	}
	unlock, err := b.LockMounts()
	if err == nil {
		err = diskimage.MountFresh(img, dir)
		unlock()
	}
	if nr := (*diskimage.NoRoomError)(nil); errors.As(err, &nr) {
		err = &providers.RefusedError{Why: fmt.Sprintf(imageNoRoomWords, Mib(nr.Need))}
	}
	if err != nil {
		_ = os.Remove(img)
		_ = os.Remove(dir)
		return false, err
	}
	b.Grow.Start(b.Path(DirDisks), b.Log)
	return true, nil
}

// RemoveBoxFolder removes a box's folder and its image: unmounted and the
// image removed under the disks' lock, so no boxsnap process mounts it
// again in between, then the folder it was mounted on.
func (b *Disks) RemoveBoxFolder(dir, img string) error {
	if _, err := os.Lstat(img); err == nil || IsMounted(dir) {
		unlock, err := b.LockMounts()
		if err != nil {
			return err
		}
		err = Unmount(dir)
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

// BoxRoom is what the box's own file system holds, by statfs: its room
// for files (what ext4 gives to files, less what it keeps back), what is
// free of it now, and what its held room holds (diskimage), given to it as
// it fills.
type BoxRoom struct {
	Capacity, Free, Held int64
	Files                int64 // how many files (inodes) it holds at most
	noInodes             bool
}

// RoomOf reads the room of the file system at dir.
func RoomOf(dir string) (BoxRoom, error) {
	var s unix.Statfs_t
	if err := unix.Statfs(dir, &s); err != nil {
		return BoxRoom{}, err
	}
	fr := providers.RoomOfStatfs(&s)
	r := BoxRoom{
		Capacity: fr.Size(),
		Free:     fr.Free,
		Files:    int64(s.Files),
		noInodes: s.Files > 0 && s.Ffree == 0,
	}
	if fsd := diskimage.MountOf(dir); fsd != "" {
		r.Held = diskimage.Held(fsd)
	}
	return r, nil
}

// full says whether a write in the box fails for want of room now: at its
// bound, or, with room still held, when the host's disk is full.
func (r BoxRoom) full() bool { return r.Free < fullMargin || r.noInodes }

// atBound says whether the box's room is all given: a full box is full at
// its bound, not for want of room on the host.
func (r BoxRoom) atBound() bool { return r.Held == 0 }

// failing says whether a write in the box fails for want of room now: at
// its bound, out of files (whatever its room), or with room held when the
// host refused to give it (hostRefused); a box writing faster than the
// growth watch gives it room is not full.
func (r BoxRoom) failing(hostRefused bool) bool {
	return r.noInodes || (r.full() && (r.atBound() || hostRefused))
}

// Fullness is why a write in a box whose own file system bounds its disk
// fails now: "" when it does not.
type Fullness string

const (
	FullAtBound Fullness = "bound" // its room is all given and used
	FullOfFiles Fullness = "files" // it holds as many files as it can
	FullHost    Fullness = "host"  // the host refused it room below its bound
)

// Why says why a write in the box fails now (failing), or "".
func (r BoxRoom) Why(hostRefused bool) Fullness {
	switch {
	case !r.failing(hostRefused):
		return ""
	case r.noInodes:
		return FullOfFiles
	case r.atBound():
		return FullAtBound
	}
	return FullHost
}

// Used is what the box's files hold of its room.
func (r BoxRoom) Used() int64 { return r.Capacity - r.Free - r.Held }

// FitsWords refuses, in words, a restore or a fork of a snapshot whose files
// hold more than room bytes (what the box's disk bound leaves for files),
// before anything is written; nil when they fit.
func FitsWords(m *store.Manifest, room int64) error {
	if m.Bytes <= room {
		return nil
	}
	return &providers.RefusedError{Why: fmt.Sprintf("The snapshot's files hold %s, more than the box's disk bound leaves for its files (%s): nothing was written. Raise the disk bound in its template and reset the box, or choose a smaller snapshot.",
		Mib(m.Bytes), Mib(room))}
}

// Mib says a size in MiB, to a tenth.
func Mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// MoveImage moves a box's file system made under temporary names (the
// image img mounted on the folder dir) to the box's own names: unmounted,
// the image renamed to toImg, the folder to, and mounted there. On failure
// the file system is back where it was.
func (b *Disks) MoveImage(dir, img, to, toImg string) error {
	unlock, err := b.LockMounts()
	if err != nil {
		return err
	}
	defer unlock()
	if err := Unmount(dir); err != nil {
		return err
	}
	back := func(err error) error {
		_ = MountImage(img, dir)
		return err
	}
	if err := os.Rename(dir, to); err != nil {
		return back(err)
	}
	if err := os.Rename(img, toImg); err != nil {
		_ = os.Rename(to, dir)
		return back(err)
	}
	if err := MountImage(toImg, to); err != nil {
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
		mp := process.UnescapeMount(f[4])
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
