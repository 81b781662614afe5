package disks

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"github.com/boxsnap/boxsnap/providers/local/diskimage"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// ForkPrefix begins the names a fork is made under (ForkFolder): its folder
// boxes/.fork-<box>-<suffix>, its image disks/.fork-<box>-<suffix>.img and
// where that is mounted (.fs), renamed to the box's own once whole.
const ForkPrefix = ".fork-"

// SweepForks removes what forks a crash cut short left: every folder,
// image and mount named for a fork being made. A fork holds the store lock
// shared while it works, so a caller holding it exclusive sees no fork at
// work, and each such name is a dead fork's. It answers the bytes the
// images held on the host.
func (b *Disks) SweepForks() (int64, error) {
	var freed int64
	var errs []error
	dirs, _ := filepath.Glob(b.Path(store.DirBoxes, ForkPrefix+"*"))
	for _, dir := range dirs {
		img := b.Path(DirDisks, filepath.Base(dir)+".img")
		n := allocated(img)
		if err := b.RemoveBoxFolder(dir, img); err != nil {
			errs = append(errs, err)
			continue
		}
		freed += n
	}
	// An image whose folder is gone, or was never mounted on it, and the
	// folder an image was mounted on first.
	imgs, _ := filepath.Glob(b.Path(DirDisks, ForkPrefix+"*.img"))
	fsds, _ := filepath.Glob(b.Path(DirDisks, ForkPrefix+"*.fs"))
	for _, img := range imgs {
		fsds = append(fsds, diskimage.FSDirOf(img))
	}
	unlock, err := b.LockMounts()
	if err != nil {
		return freed, errors.Join(append(errs, err)...)
	}
	defer unlock()
	for _, fsd := range fsds {
		if err := Unmount(fsd); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := os.Remove(fsd); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	for _, img := range imgs {
		n := allocated(img)
		if err := os.Remove(img); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		freed += n
	}
	return freed, errors.Join(errs...)
}

// allocated is what the file at path holds on its disk, 0 when it is
// missing.
func allocated(path string) int64 {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return 0
	}
	return st.Blocks * 512
}
