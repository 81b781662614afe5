package disks

// The words a box's disk image says.
const (
	// imageNoRoomWords refuses a new box (or a fork, or a reset) whose
	// disk image the host has no room for: what it takes at once.
	imageNoRoomWords = "The host's disk has no room for the box's disk image, which takes %s on the host at once (its file system's own blocks, and room ahead of the box's writes) and more as the box fills: nothing was made. Make room on the host, or give the box's template a smaller disk bound."
)
