package providers

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// FileSystemRoom is a file system's room in bytes as df counts it: the
// blocks the file system keeps for root are neither taken nor free, so one
// that keeps many (ext4's reserved blocks) is not read as full for them.
// Every backend that reads how full a folder's file system is reads it
// here, so the room setting means the same on each, and what df says.
type FileSystemRoom struct {
	Taken, Free int64
}

// RoomOfStatfs is the room s reads.
func RoomOfStatfs(s *unix.Statfs_t) FileSystemRoom {
	bs := int64(s.Bsize)
	return FileSystemRoom{Taken: int64(s.Blocks-s.Bfree) * bs, Free: int64(s.Bavail) * bs}
}

// ReadRoom reads the room of the file system holding dir.
func ReadRoom(dir string) (FileSystemRoom, error) {
	var s unix.Statfs_t
	if err := unix.Statfs(dir, &s); err != nil {
		return FileSystemRoom{}, fmt.Errorf("read the room of %s: %w", dir, err)
	}
	return RoomOfStatfs(&s), nil
}

// Size is what the file system can hold: what it holds and its room.
func (r FileSystemRoom) Size() int64 { return r.Taken + r.Free }

// PercentFull is how full it is, as df's Use% (0 for a file system of no
// size).
func (r FileSystemRoom) PercentFull() float64 {
	if r.Size() <= 0 {
		return 0
	}
	return float64(r.Taken) * 100 / float64(r.Size())
}
