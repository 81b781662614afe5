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
// Links makes most of a tree's files hard links to the store's content
// objects instead of copies: on ext4 a new file's making is most of a
// tree's cost, and a link costs one link call. It is safe because:
//   - overlayfs never writes a lower layer: a fork's write, truncate,
//     chmod, chown or utimes copies the file up into the fork's own image
//     first, so neither the store's object nor a sibling changes through
//     a fork (a hard link, unlike a symbolic one, leads nowhere);
//   - only a file owned by root, neither setuid, setgid nor sticky, and
//     writable by neither its group nor others is linked, so the object
//     never becomes a program that raises its runner, nor a file another
//     host user may change or re-mode; and only where boxsnap runs as root
//     and the tree and the store's content are on one file system;
//   - an object's mode, owner and mtime are set to the snapshot's file's
//     only while no tree holds it (its one name the store's), so one tree
//     never changes another's file; a file whose object another tree
//     holds with other details is copied, as is a second path of the same
//     content in one tree, so each path of a tree is its own file;
//   - each object is opened once, checked against its hash and size, and
//     linked by that open file, so what is linked is what was checked; an
//     object whose stat (device, inode, size, change time) is as it was
//     when this process wrote it or last checked it is not read again, as
//     any write to it would have moved its change time;
//     the store's content is never changed in place;
//   - the store letting go of an object (its sweep) removes a name, not
//     the file: a tree keeps its files. A tree's sweep and the store's
//     count as freed only a file no other name holds; the content cache's
//     eviction neither counts nor removes an object a tree links (its room
//     is the tree's, and removing the name would only make the next read
//     fetch it again).
//
// A link made or removed elsewhere (another snapshot's tree, the store's
// sweep) changes a linked file's ctime and link count as a fork sees
// them, never its content or details: a fork's take that walks its
// folder, and its change check, take such a file whose change time alone
// moved as unchanged (journal.Lower.SameShared).
//
// It imports only the standard library, golang.org/x/sys/unix,
// providers/local/confined, providers/local/diskimage and
// providers/local/store; it must never import app/..., jobs, package
// local or another backend.
package overlay
