package disks

import (
	"os"

	"github.com/boxsnap/boxsnap/providers"
)

// FullStatus is what a box whose own file system bounds its disk says of
// it: a DiskStop marked Full while a write in it fails, saying why (at its
// bound; out of files, Files; the host full below its bound, HostFull),
// else nil. A box with no image, or whose room cannot be read, says
// nothing.
func (b *Disks) FullStatus(box, dir string) *providers.DiskStop {
	fi, err := os.Stat(b.ImageFile(box))
	if err != nil || !IsMounted(dir) {
		return nil
	}
	r, err := RoomOf(dir)
	if err != nil {
		return nil
	}
	d := &providers.DiskStop{BoundBytes: fi.Size(), UsedBytes: r.Used(), Full: true}
	switch r.Why(b.Grow.HostRefused(box)) {
	case FullAtBound:
	case FullOfFiles:
		d.Files = r.Files
	case FullHost:
		d.HostFull = true
	default:
		return nil
	}
	return d
}
