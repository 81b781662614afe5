package disks

import (
	"context"
	"fmt"
	"os"

	"github.com/boxsnap/boxsnap/providers/local/diskimage"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// ForkFolder makes the empty folder a fork of m is written in, under a
// temporary name: with a file system of its own of the bound's size where
// loop mounts work (an image under a temporary name too, mounted on the
// folder, moved to the box's names once clean), else a plain folder. A
// snapshot whose files hold more than that room is refused, with nothing
// left: the fork would fail half-way.
func (b *Disks) ForkFolder(ctx context.Context, m *store.Manifest, box string, bound int64) (tmp, tmpImg string, image bool, err error) {
	suffix := store.RandomSuffix()
	tmp = b.Path(store.DirBoxes, ".fork-"+box+"-"+suffix)
	tmpImg = b.Path(DirDisks, ".fork-"+box+"-"+suffix+".img")
	if image, err = b.MakeBoxFolder(ctx, tmp, tmpImg, bound); err != nil {
		return "", "", false, fmt.Errorf("fork: %w", err)
	}
	room := bound
	if image {
		var r BoxRoom
		if r, err = RoomOf(tmp); err == nil {
			room = r.Free + r.Held
		}
	}
	if err == nil {
		err = os.Chmod(tmp, 0o700)
	}
	if err != nil {
		err = fmt.Errorf("fork: %w", err)
	} else {
		err = FitsWords(m, room)
	}
	if err == nil && image {
		err = diskimage.MakeRoomIn(tmp, m.Bytes)
	}
	if err != nil {
		_ = b.RemoveBoxFolder(tmp, tmpImg)
		return "", "", false, err
	}
	return tmp, tmpImg, image, nil
}
