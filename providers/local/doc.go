// Package local is boxsnap's embedded default backend: a box is a folder on
// this host, optionally with a process (a command run in the folder in its own
// process group), and a snapshot is a content-addressed copy of the folder.
//
// # The store
//
// Everything lives under Config.Root:
//
//	boxes/<boxID>/                 a box's files; a fork is made in boxes/.fork-* and renamed
//	state/<boxID>.json             a box's command, whether it should run, its last take
//	state/<boxID>.log              its process's output
//	content/ab/cdef…               each file's content once, named by its SHA-256, read-only,
//	                               shared by every snapshot of every box
//	snapshots/<snapshotID>/
//	    manifest.json              every path: type, mode, uid/gid, times, size, content
//	                               hash, link target, and the stat cache (inode, ctime)
//	    label.json                 providers.Label and the take's time: IDs and dates only
//	    deleting                   present while a delete is under way (Incomplete)
//	    damaged                    present once damaged content was found (Incomplete)
//	snapshots/.taking-<id>-*       a snapshot being written; renamed into place when whole
//	groups/<group>.json            an import group's member names
//	tmp/                           content being copied; imports being staged
//	store.lock                     flock: takes shared, content sweeps exclusive
//	rates.json                     measured bytes/s and files/s, for plans' times
//
// Manifests and labels start with a line holding the SHA-256 of the JSON that
// follows, and are written to a temporary file, synced, and renamed. Content a
// manifest names is flushed with one syncfs before the manifest is written.
//
// # Why SHA-256
//
// It is in the standard library and uses the CPU's SHA instructions where
// there are any (about 2 GB/s a core here), so it needs no new module; BLAKE3
// would be faster without them but is not in go.mod.
//
// # Processes
//
// A box's process is a child of boxsnap: it ends when boxsnap does. The state
// file keeps whether the box should run; RestartRunning, called by the server
// at start, starts those processes again. New never starts one by itself.
//
// This package imports only the standard library, golang.org/x/sys/unix and
// providers; it must never import the core, the store, the web app or another
// backend.
package local
