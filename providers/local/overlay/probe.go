package overlay

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/boxsnap/boxsnap/providers/local/diskimage"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// Probe says why a fork's box cannot be an overlay over a shared tree in
// the data folder root ("" when it can), and the fix. It tries one as a
// fork makes it: a small image made and mounted in root's disks folder,
// its box made an overlay over a tree in root's shared trees' folder,
// then all of it removed. A host where it fails forks by copying.
func Probe(root string) (why, fix string) {
	if !Known() {
		return "this host's kernel has no overlay file system", "load the overlay module (modprobe overlay)"
	}
	lowers, disksDir := filepath.Join(root, DirLowers), filepath.Join(root, "disks")
	for _, d := range []string{lowers, disksDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "its folder " + d + " cannot be made: " + err.Error(), "choose a data folder boxsnap can write"
		}
	}
	base := ".probe-" + store.RandomSuffix()
	lower := filepath.Join(lowers, base)
	img, mnt := filepath.Join(disksDir, base+".img"), filepath.Join(disksDir, base)
	defer os.RemoveAll(lower)
	defer os.Remove(img)
	defer os.Remove(mnt)
	if err := os.Mkdir(lower, 0o700); err != nil {
		return "a shared tree cannot be made: " + err.Error(), "choose a data folder boxsnap can write"
	}
	if err := diskimage.Make(context.Background(), img, 2<<20); err != nil {
		return "a box's image cannot be made: " + err.Error(), "install e2fsprogs, and give boxsnap a data folder it can write"
	}
	if err := os.Mkdir(mnt, 0o700); err != nil {
		return "a mount point cannot be made: " + err.Error(), "give boxsnap a data folder it can write"
	}
	if err := diskimage.MountFresh(img, mnt); err != nil {
		return "a box's image cannot be mounted: " + err.Error(), "bound the boxes' disks by images of their own (see the local box disks line)"
	}
	defer diskimage.Unmount(mnt)
	if err := diskimage.OverlayOn(img, mnt, filepath.Join("..", DirLowers, base)); err != nil {
		return "an overlay was refused: " + err.Error(), "run boxsnap where it may mount an overlay (root on the host, or a privileged container), with its data folder on a file system overlayfs takes as a lower layer (ext4, XFS, tmpfs)"
	}
	return "", ""
}

// Known says whether the kernel lists the overlay file system (a
// module not loaded yet loads at the first mount on most hosts: the probe
// mounts one then).
func Known() bool {
	data, err := os.ReadFile("/proc/filesystems")
	if err != nil {
		return true // the mount says
	}
	return strings.Contains(string(data), "\toverlay\n") || moduleLoadable()
}

// moduleLoadable says whether the overlay module is on the host to load.
func moduleLoadable() bool {
	rel, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return false
	}
	_, err = os.Stat(filepath.Join("/lib/modules", strings.TrimSpace(string(rel)), "kernel/fs/overlayfs"))
	return err == nil
}
