package disks

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers/local/diskimage"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// UnmountIdle unmounts the disk image of every box nothing uses in the
// data folder root, as the process that ran the boxes' processes stops
// (after the backend's Close), so a data folder boxsnap left holds no
// mount: a stopped `make run` leaves none. A box whose folder something
// holds (a process of it another boxsnap process runs, a take at work) is
// left mounted. Every boxsnap process mounts an image again at its next
// use of the box (existingBox), and at its start (MountImages).
func UnmountIdle(root string, log *slog.Logger) {
	ents, err := os.ReadDir(filepath.Join(root, DirDisks))
	if err != nil {
		return
	}
	unlock, err := LockMountsIn(root)
	if err != nil {
		log.Warn("local backend: the boxes' disk images stay mounted", "err", err)
		return
	}
	defer unlock()
	n := 0
	for _, e := range ents {
		box, ok := strings.CutSuffix(e.Name(), ".img")
		if !ok || store.CheckID("box", box) != nil {
			continue
		}
		dir := filepath.Join(root, store.DirBoxes, box)
		if !IsMounted(dir) {
			continue
		}
		fsd := diskimage.MountOf(dir)
		// Never detached: a folder in use answers EBUSY and stays.
		if err := unix.Unmount(dir, 0); err != nil {
			if !errors.Is(err, unix.EBUSY) {
				log.Warn("local backend: a box's disk image stays mounted", "box", box, "err", err)
			}
			continue
		}
		if fsd != "" {
			// Only boxsnap reads the image's own mount (its growth watch):
			// detached where busy, it goes when that read ends.
			if err := unix.Unmount(fsd, 0); errors.Is(err, unix.EBUSY) {
				_ = unix.Unmount(fsd, unix.MNT_DETACH)
			}
			_ = os.Remove(fsd)
		}
		n++
	}
	if n > 0 {
		log.Info("local backend: unmounted the disk images of the boxes nothing uses; each is mounted again at its next use", "boxes", n)
	}
}
