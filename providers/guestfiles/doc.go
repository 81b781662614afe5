// Package guestfiles is the one confined way the Docker and QEMU backends
// look at a guest's files that boxsnap reads without a host path to them
// (a container's files through the engine's tar stream, a disk image's
// through debugfs): the rules both looks keep, whatever reads the bytes. A
// caller's path is cleaned into parts beneath the guest's top folder and one
// that climbs with ".." is refused (Parts); it is resolved one folder at a
// time, each folder on the way a folder and never a link (Resolve); a link
// is shown as stored and never followed, and only a regular file is read
// (FileOnly, FolderOnly); a read is bounded, refused in words before it
// starts when the file is larger and cut off when its content runs past
// (ReadAtMost); a walk holds at most MaxEntries entries (TooMany); and a
// text file's two sides are compared, a side without it read as /dev/null
// (DiffFile). Each refusal is a providers.RefusedError in the same words on
// both backends.
//
// The local backend's look (providers/local/browse) cleans a caller's path
// with Parts and refuses in these words too; it reads a box's folder on the
// host through providers/local/confined (openat2 beneath the folder), which
// this package does not replace.
//
// It imports only the standard library and providers; it must never import
// app/..., jobs or a backend.
package guestfiles
