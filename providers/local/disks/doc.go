// Package disks bounds the local backend's boxes' disks to the byte where
// the host allows loop mounts: a box's folder is the mount point of an ext4
// file system of its own, in an image under the store's disks folder
// (disks/<boxID>.img), made, mounted, moved and removed here under the
// disks' lock (Disks), which a reset's swap in package local takes too,
// with the room it has and why a write in it fails (BoxRoom). UnmountIdle and UnmountAll unmount what
// no box needs. Elsewhere the backend's watch bounds a box's disk.
//
// It imports only the standard library, golang.org/x/sys/unix, providers,
// providers/local/diskimage, providers/local/process and
// providers/local/store; it must never import app/..., jobs, package
// local or another backend.
package disks
