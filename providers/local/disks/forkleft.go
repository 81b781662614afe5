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

// ResetPrefix begins the names a reset makes its fresh box under
// (boxes/.reset-<box>-<suffix>, its image and mount beside it in disks),
// and those it moves the old box to (.reset-old-<box>-<suffix>) until it
// removes it.
const ResetPrefix = ".reset-"

// SweepForks removes what forks a crash cut short left: every folder,
// image and mount named for a fork being made. A fork holds the store lock
// shared while it works, so a caller holding it exclusive sees no fork at
// work, and each such name is a dead fork's. It answers the bytes the
// images held on the host.
func (b *Disks) SweepForks() (int64, error) { return b.sweepNamed(ForkPrefix) }

// SweepResets removes what resets a crash cut short left: every folder,
// image and mount named for a reset's fresh or old box. A reset holds the
// store lock shared while it works, as a fork does, so a caller holding it
// exclusive sees no reset at work, and each such name is a dead reset's;
// the caller finishes first the resets a crash cut short mid-swap, whose
// records name them. It answers the bytes the images held on the host.
func (b *Disks) SweepResets() (int64, error) { return b.sweepNamed(ResetPrefix) }

// sweepNamed removes every box folder, image and mount whose name begins
// with prefix.
func (b *Disks) sweepNamed(prefix string) (int64, error) {
	var freed int64
	var errs []error
	dirs, _ := filepath.Glob(b.Path(store.DirBoxes, prefix+"*"))
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
	imgs, _ := filepath.Glob(b.Path(DirDisks, prefix+"*.img"))
	fsds, _ := filepath.Glob(b.Path(DirDisks, prefix+"*.fs"))
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
