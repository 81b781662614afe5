package disks

import (
	"os"

	"github.com/boxsnap/boxsnap/providers/local/store"
)

// SwapFolder puts the plain folder fresh in place of the box's folder dir,
// and removes the old one; on failure the box is as it was.
func (b *Disks) SwapFolder(box, dir, fresh string) error {
	old := b.Path(store.DirBoxes, ".reset-old-"+box+"-"+store.RandomSuffix())
	oldImg := ""
	unlock, err := b.LockMounts()
	if err != nil {
		_ = os.RemoveAll(fresh)
		return err
	}
	if b.HasImage(box) {
		// A box with a file system of its own, on a host where loop mounts
		// stopped working: it gets a plain folder.
		if err = Unmount(dir); err == nil {
			oldImg = old + ".img"
			if err = os.Rename(b.ImageFile(box), oldImg); err != nil {
				_ = MountImage(b.ImageFile(box), dir)
			}
		}
	}
	if err == nil {
		if err = os.Rename(dir, old); err == nil {
			if err = os.Rename(fresh, dir); err != nil {
				_ = os.Rename(old, dir) // put the box back as it was
			}
		}
		if err != nil && oldImg != "" {
			_ = os.Rename(oldImg, b.ImageFile(box))
			_ = MountImage(b.ImageFile(box), dir)
		}
	}
	unlock()
	if err != nil {
		_ = os.RemoveAll(fresh)
		return err
	}
	if err := os.RemoveAll(old); err != nil {
		b.Log.Warn("the reset box's old folder was not removed", "box", box, "folder", old, "err", err)
	}
	if oldImg != "" {
		_ = os.Remove(oldImg)
	}
	return nil
}

// SwapImage puts the file system fresh (its image freshImg mounted on the
// folder fresh) in place of the box's: the box's folder dir unmounted (or,
// for a plain folder, moved aside and made again), the fresh image renamed
// to the box's and mounted on dir, and the old one removed. On failure the
// box is as it was.
func (b *Disks) SwapImage(box, dir, fresh, freshImg string) error {
	img := b.ImageFile(box)
	unlock, err := b.LockMounts()
	if err != nil {
		_ = b.RemoveBoxFolder(fresh, freshImg)
		return err
	}
	old := b.Path(store.DirBoxes, ".reset-old-"+box+"-"+store.RandomSuffix())
	oldImg := old + ".img"
	hadImage := b.HasImage(box)
	err = Unmount(fresh)
	if err == nil {
		_ = os.Remove(fresh)
		if hadImage {
			if err = Unmount(dir); err == nil {
				if err = os.Rename(img, oldImg); err != nil {
					_ = MountImage(img, dir)
				}
			}
		} else if err = os.Rename(dir, old); err == nil {
			if err = os.Mkdir(dir, 0o755); err != nil {
				_ = os.Rename(old, dir)
			}
		}
		if err == nil {
			if err = os.Rename(freshImg, img); err == nil {
				if err = MountImage(img, dir); err != nil {
					_ = os.Rename(img, freshImg)
				}
			}
			if err != nil {
				// Put the box back as it was.
				if hadImage {
					_ = os.Rename(oldImg, img)
					_ = MountImage(img, dir)
				} else {
					_ = os.Remove(dir)
					_ = os.Rename(old, dir)
				}
			}
		}
	}
	unlock()
	if err != nil {
		_ = b.RemoveBoxFolder(fresh, freshImg)
		return err
	}
	if hadImage {
		_ = os.Remove(oldImg)
	} else if err := os.RemoveAll(old); err != nil {
		b.Log.Warn("the reset box's old folder was not removed", "box", box, "folder", old, "err", err)
	}
	return nil
}
