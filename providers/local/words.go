package local

// The words the local backend writes in a box's log (state/<boxID>.log),
// which the box's page shows; a box's status says the same in the core's
// words (snapshots.DiskStopWords).
const (
	// logFullWords is written once when a box's own file system becomes
	// full: the bound, what its files hold, and what to do.
	logFullWords = "boxsnap: the box reached its disk bound of %s (its files hold %s): it runs on, but its writes past the bound fail (no space left on device), and its files are as they were written. Delete some of them to make room, or raise the disk bound in its template and reset the box.\n"
	// logHostFullWords is written once when a box's own file system is
	// full below its bound because the host's disk is: its room cannot
	// grow until room is made on the host.
	logHostFullWords = "boxsnap: the host's disk is full, so the box's disk cannot grow toward its bound of %s (its files hold %s): it runs on, but its writes fail (no space left on device) until room is made on the host, and its files are as they were written.\n"
	// logNoFilesWords is written once when a box's own file system holds
	// as many files as it can (its inodes, Inodes in diskimage), below its
	// bound or at it: the limit, the bound, what its files hold.
	logNoFilesWords = "boxsnap: the box reached its limit of %d files (its disk bound of %s sets it; its files hold %s): it runs on, but a new file, folder or link in it fails (no space left on device), and its files are as they were written. Delete some of them to make room, or raise the disk bound in its template and reset the box.\n"
	// logRoomWords is written when room was made in it again.
	logRoomWords = "boxsnap: the box has room again under its disk bound of %s (its files hold %s).\n"
)
