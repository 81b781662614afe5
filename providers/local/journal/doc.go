// Package journal is the local backend's change journal: while a box runs,
// an inotify instance watches every folder of it (and each hard-linked
// file) and records the paths that changed since the last take or restore
// (journal.go says what inotify never reports, and what the journal does
// about it). Set holds the running boxes' journals; a take or a restore
// cuts a box's record, reads only the paths it names from the base it is
// relative to (readChanged), and rebases the record once it succeeded.
// Whatever makes a record incomplete says why, and the take walks.
// Reads answers from the journals, the box's state file and the store's
// manifests what a box's files were last known to be (StatIndex) and
// which of its paths changed since (ChangedSinceTake, FromJournal).
//
// It reads a box's files only beneath its folder (providers/local/confined).
// It imports only the standard library, golang.org/x/sys/unix, providers,
// providers/local/confined, providers/local/state and
// providers/local/store; it must never import
// app/..., jobs, package local or another backend.
package journal
