package store

import "golang.org/x/sys/unix"

// fsTopDirFlag is FS_TOPDIR_FL (chattr +T): ext4's inode allocator
// (Orlov) takes each folder made in a folder so marked for the top of a
// tree of its own, and places it in a block group with more free inodes
// than most and the fewest folders, rather than beside its parent.
const fsTopDirFlag = 0x00020000

// SpreadFolders marks dir so the folders made in it are placed apart
// from it on ext4 (fsTopDirFlag), and so are the files made in them,
// which ext4 places beside their folder. It matters where the file
// system has no journal: there ext4 will not reuse an inode freed in the
// last minutes while others are free, and checks each free inode of a
// block group from its start, one buffer lookup each, before it gives
// one out: beside folders where many files were just removed (another
// box's release, a sweep, other programs' clean-up), making a file then
// costs a scan of every inode they freed. It spares the store others'
// removals near the data folder, not every one: a block group that held
// only a large tree placed apart, just removed, has the fewest folders
// and may be chosen next. A file system without the flag (not ext4, or a
// folder boxsnap does not own) is left as it is: the flag changes only
// where new inodes go, never what is written.
func SpreadFolders(dir string) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
	if err != nil || flags&fsTopDirFlag != 0 {
		return
	}
	_ = unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, int(flags|fsTopDirFlag))
}
