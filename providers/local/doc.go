// Package local is boxsnap's embedded default backend: a box is a folder on
// this host, optionally with a process (a command run in the folder in its own
// process group), and a snapshot is a content-addressed copy of the folder.
//
// # The store
//
// Everything lives under Config.Root:
//
//	boxes/<boxID>/                 a box's files; a fork is made in boxes/.fork-* and renamed
//	                               (what a killed fork left there, a sweep removes);
//	                               where loop mounts work, its image's box subfolder, bound
//	disks/<boxID>.img              a box's own ext4 file system, a file of its disk bound's
//	                               size allocated on the host as the box fills (disks,
//	                               diskimage); a fork and a reset make theirs under
//	                               disks/.fork-* and disks/.reset-*
//	disks/<boxID>.fs/              where the image is mounted: its box subfolder, and its
//	                               held room (room), which the box never sees; for a fork
//	                               over a shared tree, also lower (the tree's path from
//	                               disks/) and work (overlayfs's), its box the upper layer
//	                               of the overlay mounted on boxes/<boxID>/
//	lowers/<snapshotID>/tree/      the read-only files forks of that snapshot share, written
//	                               once from the store, kept while a box's state names it
//	                               (overlay); lowers/.making-* is one being written
//	disks/mount.lock               flock: held to mount, unmount or swap a box's image
//	state/<boxID>.json             a box's command, whether it should run, its last take
//	state/<boxID>.log              its process's output
//	state/<boxID>.found            a copy of a box released on another host, kept here,
//	                               stopped, until the person deletes it (state.MarkFound)
//	state/<boxID>.cache            after a restore: the target's entries with the stat the
//	                               restore left, so the next take reads only what changed
//	content/ab/cdef…               each file's content once, named by its SHA-256, read-only,
//	                               shared by every snapshot of every box; where forks share
//	                               trees (as root), one a tree may link is made with the mode
//	                               and mtime of the file it was copied from, which a tree's
//	                               link shows, else 0444
//	snapshots/<snapshotID>/
//	    manifest.json              every path: type, mode, uid/gid, times, size, content
//	                               hash, link target, and the stat cache (inode, ctime)
//	    label.json                 providers.Label and the take's time: IDs and dates only
//	    deleting                   present while a delete is under way (Incomplete)
//	    damaged                    present once damaged content was found (Incomplete)
//	snapshots/.taking-<id>-*       a snapshot being written; renamed into place when whole
//	snapshots/.fetching-<id>-*     a snapshot's records being fetched from the content store
//	groups/<group>.json            an import group's member names
//	tmp/                           content being copied or fetched; imports being staged
//	lists/<hash>                   with a content store: a large content's chunk list
//	store.lock                     flock: takes shared, content sweeps exclusive
//	rates.json                     measured bytes/s and files/s, for plans' times
//	cache-count.json               with a content store: the content cache's last count and when
//
// Manifests and labels start with a line holding the SHA-256 of what follows:
// JSON for a label, a compact binary form for a manifest (store/codec.go), which a
// box of 20,000 files needs for an incremental take to stay well under rsync's.
// A snapshot is written under snapshots/.taking-*, flushed with one syncfs
// (content, manifest and label together), then renamed into place: it is never
// half-published. A restore and a fork make one syncfs of the box's file
// system (its own image's, or the data folder's) before they say done, so
// "restored" survives a power cut as "ready" does (durable.go).
// Config.NoSync skips these syncs, for tests and benchmarks.
//
// # Takes and restores
//
// A take scans the folder with fstatat from several workers, reuses the hash
// of every file whose size, mtime, ctime and inode match the box's last known
// stat (the last take's manifest, or the stat cache of the last restore), and
// copies the rest into unnamed files (O_TMPFILE) with a reflink or
// copy_file_range, hashes the copy, re-stats the source (a file that changed
// while copied is copied again, three times at most, then the take fails), and
// links the copy into content/ under its hash. Every box path the take opens
// is resolved beneath the box's folder with no link followed (openat2). A
// running box's processes are frozen for the take and always thawed: each
// start of a box's process is born in a cgroup of its own
// (boxsnap/<box>-<tag>-<random>), which holds whatever it runs, a process
// that calls setsid too: a cgroup v2 one frozen through cgroup.freeze where
// a cgroup v2 hierarchy is mounted, a cgroup v1 freezer one otherwise;
// where there is neither, its process group is stopped (SIGSTOP) and
// continued (SIGCONT), with a warning in the log.
//
// A restore scans the folder, decides per path what differs (a file whose stat
// matches the last known stat is compared by hash without reading it; one of
// the same size with an unknown stat is re-hashed), checks every piece of
// content it will write against its hash before changing anything, then
// removes, writes (temporary file and rename) and puts back modes, owners
// (as root) and times.
//
// While a box runs, its change journal (package journal: inotify on every folder)
// records the paths that changed since the last take or restore. A take then
// stats only those paths (and reads the folders made or moved in), starting
// from the last manifest, and a restore compares the target with the last
// manifest plus those paths: neither walks the folder, and ChangedSinceTake
// answers from memory. Where the record is incomplete (the kernel's queue
// overflowed, more paths changed than Config.JournalPaths, a watch could not
// be added, a network file system, boxsnap restarted, the box was stopped),
// the take or restore walks the folder as above and logs why.
//
// # Why SHA-256
//
// It is in the standard library and uses the CPU's SHA instructions where
// there are any (about 2 GB/s a core here), so it needs no new module; BLAKE3
// would be faster without them but is not in go.mod.
//
// # Processes
//
// A box's process is a child of the boxsnap process that started it, its
// owner: it ends when that process does. The state file keeps whether the box
// should run, its owner (SetOwner) and its process, so several boxsnap
// processes on one data folder run it once and any of them freezes or ends
// it (owner.go); TakeOver, called by working processes at start and at
// intervals, starts the boxes whose owner is gone (RestartRunning, for one
// process alone, starts every box marked running). A start writes the
// process's freezer cgroup in the state file before the process runs in
// it, so whatever runs of a start whose owner died before it recorded the
// process is found there, and ended before another starts; a start whose
// record the state file cannot take (a full disk) starts nothing, or ends
// its process at once: no process of a box runs that the state file does
// not name. New never starts one by itself.
//
// # Its packages
//
// Beside diskimage (a box's own file system), the backend is this package
// and sixteen below it, each with a type holding only the fields it uses,
// which Backend embeds (so their methods answer for it) and New wires:
//
//   - store: the store's layout, its checked writes and reads, the store
//     lock, and the manifests with their binary form and cache (Store);
//   - sweep: deleting snapshots and sweeping the content none holds
//     (Deletes);
//   - content: copying files into the content store and hashing them
//     (Copier), with a reflink, copy_file_range or reads and writes;
//   - confined: the one way to a box's files, Beneath (openat2 beneath the
//     box's folder, no link followed), the walk of a folder beneath it and
//     what it holds (Scanner), the marker folder, and the checks of a
//     manifest's entries before any is written into a box;
//   - journal: the change journal of every running box (Set), and the
//     reads of the paths it names and of what a box's files were last
//     known to be (Reads);
//   - owners: the box processes several boxsnap processes share: a box's
//     lock, and ending, pausing and cleaning up after a process another
//     of them started (Owners);
//   - process: a box's process, its user, sandbox, bounds, network and
//     cgroup (Processes);
//   - exports: exports, imports and the scrubbed share copy (Exports,
//     which answers providers.Exporter);
//   - apply: bringing a box's folder to exactly a snapshot (a restore's
//     rollback, a fork's new folder), copying a template into a new
//     box's, and writing a file or the access file into a box (Writer);
//   - disks: a box's own file system, bounding its disk to the byte:
//     its image made, mounted, moved, swapped and removed, and its room
//     (Disks);
//   - capture: reading a box's folder into a manifest, copying the
//     content the store lacks, publishing the snapshot whole, and the
//     rates takes go at (Capturer);
//   - held: the snapshots the store holds, whole or not, and the date
//     each is kept until (Held);
//   - state: a box's state file, its reads and writes (States), and
//     whether the process it records still runs;
//   - browse: listing, reading and comparing a snapshot's files with
//     another's or the box's now (Files, which answers providers.Browser
//     and providers.ReadChecker);
//   - objstore: the content store in an S3 bucket, its settings and its
//     refusals in words (Bucket);
//   - ship: with a content store (Config.ContentStore), a take's content
//     and manifest shipped to the bucket before the take answers, large
//     files in content-defined chunks, the content a restore, fork,
//     browse or export lacks fetched back, checked by its hash, and the
//     host's content kept under its bound (Shipper, a field, not
//     embedded): Config.ContentCacheBytes, or by default
//     DefaultCachePercent of the file system holding it (cachebound.go,
//     which answers providers.ContentCache).
//
// This package keeps the Backend, which answers providers.Backend and its
// optional faces: the box folders, takes and restores as
// steps, forks, plans from the measured rates, the disk bound's watch and the box processes' owners.
// TestNoPathBasedBoxFileCalls walks this package and those below it.
//
// This package and those below it import only the standard library,
// golang.org/x/sys/unix, providers and each other (this package those
// below, never the reverse); they must never import the core, the store,
// the web app or another backend.
package local
