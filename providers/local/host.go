package local

import (
	"log/slog"

	"github.com/boxsnap/boxsnap/providers/local/disks"
	"github.com/boxsnap/boxsnap/providers/local/overlay"
	"github.com/boxsnap/boxsnap/providers/local/process"
)

// DefaultBoxUser is the unprivileged user a box's process runs as when its
// template names none and boxsnap runs as root (process.DefaultBoxUser).
const DefaultBoxUser = process.DefaultBoxUser

// MakeFolder makes dir and each missing folder above it, passable by a
// box's user when boxsnap runs as root (process.MakeFolder): boxsnap's
// start calls it on its data folder before the backend is opened.
func MakeFolder(dir string) error { return process.MakeFolder(dir) }

// Passable lets others pass through dir and each folder above it up to
// stop (process.Passable); tests call it on their temporary folders.
func Passable(dir, stop string) error { return process.Passable(dir, stop) }

// ProbeLoop says why a box's folder cannot be a file system of its own
// here, and the fix; "" where a loop mount works (package disks).
func ProbeLoop(dir string) (why, fix string) { return disks.ProbeLoop(dir) }

// ProbeShare says why forks of a snapshot in the data folder root cannot
// share its files here, each fork's box an overlay over one read-only tree
// of them, and the fix; "" where they can (package overlay).
func ProbeShare(root string) (why, fix string) { return overlay.Probe(root) }

// UnmountAll unmounts every file system mounted under root (package disks).
func UnmountAll(root string) error { return disks.UnmountAll(root) }

// UnmountIdle unmounts the boxes' file systems under root that no box
// process uses (package disks).
func UnmountIdle(root string, log *slog.Logger) { disks.UnmountIdle(root, log) }
