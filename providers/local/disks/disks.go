package disks

import (
	"log/slog"
	"sync"

	"github.com/boxsnap/boxsnap/providers/local/diskimage"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// Disks bounds the local backend's boxes' disks: each box's own file
// system (a loop-mounted image under the store's disks folder) where the
// host allows it, its mounts, swaps and room.
type Disks struct {
	*store.Store
	// Log receives the disks' logs.
	Log *slog.Logger
	// Root is the store's folder, where the disks' lock is.
	Root string
	// DiskImages gives each new box a file system of its own (Config's).
	DiskImages bool
	// Grow gives mounted images room ahead.
	Grow diskimage.Grower

	loopOnce sync.Once // DiskBounding's probe, once
	loopWhy  string    // why a box gets no file system of its own; "" when it does
	loopFix  string    // what makes it get one
}
