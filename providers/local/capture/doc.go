// Package capture takes a box's folder into the store: Capturer names the
// snapshot and its label (TakeID, NameManifest, LabelFor), reads its
// paths (from the change journal, or a walk beneath the folder) into a
// manifest, reuses the hash of every file whose stat matches the last
// known one, copies the rest into the content store by hash, and publishes
// the snapshot under snapshots/ in one rename, after one syncfs. It reads
// the store's file system for the room a take needs (Storage), and keeps
// the rates takes go at (rates.json), for plans' times (Rates).
//
// It imports only the standard library, golang.org/x/sys/unix, providers,
// providers/local/apply, providers/local/confined,
// providers/local/journal, providers/local/state and
// providers/local/store; it must never import
// app/..., jobs, package local or another backend.
package capture
