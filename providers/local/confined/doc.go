// Package confined is the one way the local backend touches a box's files:
// Beneath, a box's folder opened once by boxsnap's own path to it, beneath
// which every other path is resolved with openat2 and no link followed in
// any component (a folder the box swaps for a link mid-read is refused,
// never followed); the reads and writes of boxsnap's marker folder inside
// a box; and the checks of a manifest's entries (their paths, types and
// hashes) before any of them is written into a box. Package local's
// TestNoPathBasedBoxFileCalls holds every path-based call of the backend's
// packages to a list that names no file inside a box.
//
// It imports only the standard library, golang.org/x/sys/unix, providers
// and providers/local/store; it must never import app/..., jobs, package
// local or another backend.
package confined
