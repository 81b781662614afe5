// Package journal is the local backend's change journal: while a box runs,
// an inotify instance watches every folder of it (and each hard-linked
// file, but one whose data lies in the shared tree under a fork's overlay,
// whose other names are outside the box: see below) and
// records the paths that changed since the last take or restore
// (journal.go says what inotify never reports, and what the journal does
// about it). Set holds the running boxes' journals; a take or a restore
// cuts a box's record, reads only the paths it names from the base it is
// relative to (readChanged), and rebases the record once it succeeded.
// Whatever makes a record incomplete says why, and the take walks.
// Reads answers from the journals, the box's state file and the store's
// manifests what a box's files were last known to be (StatIndex) and
// which of its paths changed since (ChangedSinceTake, FromJournal).
//
// A fork's box may be an overlay over its snapshot's shared tree, whose
// files may be hard links to the store's content: the box then sees a
// link count of 2 or more on a file it never linked. Such a file is no
// hard link of the box's while its data still lies in the overlay's lower
// layer (the shared tree), whatever its link count, so it gets no watch of
// its own and a change to it is no hard link's change:
//   - overlayfs never writes a lower layer: the box's write, truncate,
//     chmod, chown, utimes or link of such a file first copies it up into
//     the upper layer (its own image), as a new file of one link there,
//     and the event is reported under the very name it used;
//   - its other names are the store's content object and other trees'
//     files, outside the box, whose content, mode, owner and mtime nothing
//     changes while a tree holds them (package overlay); only their change
//     time and link count move, as a link elsewhere is made or removed, so
//     a walk, a take's or a change check's, that finds only its change
//     time moved takes it as unchanged (Lower.SameShared).
//
// Lower tells such a file from the overlay's upper layer: the box's path
// has no name there (a box's path is the same path in its upper layer;
// renamed folders redirect from the upper to the lower, never back). Its
// stat cannot tell: a file copied up from a lower file of one link keeps
// the lower's device and inode as the box sees them, so a hard link the
// box made of it looks like a lower file of two links. A name in the
// upper, or anything but its plain absence (a link, a file where a folder
// was), is taken for the box's own, which keeps a hard link's treatment.
// The upper is asked only about a file of two links or more, one stat
// beneath it each.
//
// It reads a box's files only beneath its folder (providers/local/confined).
// It imports only the standard library, golang.org/x/sys/unix, providers,
// providers/local/confined, providers/local/state and
// providers/local/store; it must never import
// app/..., jobs, package local or another backend.
package journal
