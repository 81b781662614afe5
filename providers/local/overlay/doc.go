// Package overlay holds the read-only trees forks of one local snapshot
// share: the first fork of a snapshot writes its files once into a tree of
// the store's (lowers/<snapshotID>/tree, written by boxsnap from the
// store, never from a box), and each fork's box is an overlay over that
// tree whose upper layer is in the box's own disk image
// (diskimage.OverlayOn), so a fork costs a mount and what its identity's
// clean-up writes, not a copy. A tree is removed by a sweep once no box's
// state names it, so it outlives its snapshot while forks use it. Probe
// says why a host cannot mount such an overlay, where forks copy.
//
// It imports only the standard library, golang.org/x/sys/unix,
// providers/local/diskimage and providers/local/store; it must never
// import app/..., jobs, package local or another backend.
package overlay
