// Package store is the local backend's store on disk under its root: the
// names of its folders and files, the checked writes and reads of its
// manifests, labels and state (a first line holding the SHA-256 of what
// follows), the store lock (flock: takes shared, content sweeps
// exclusive), and the manifests themselves: a snapshot's entries, their
// compact binary form (codec.go) and the cache of parsed manifests that
// Store reads them through. Package local's doc.go draws the layout.
//
// It reaches only the store's own files by their paths, never a file
// inside a box. It imports only the standard library, golang.org/x/sys/unix
// and providers; it must never import app/..., jobs, package local or
// another backend.
package store
