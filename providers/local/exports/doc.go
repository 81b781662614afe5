// Package exports is the local backend's exports, imports and share
// copies: Exports writes a snapshot as a tar archive of its manifest and
// the content it names (ExportSnapshot), checks archives whole as they are
// read (their entries, hashes and the content they unpack to, bounded and
// checked against the store's free room) before it publishes them as the
// snapshots of an import group (ImportSnapshots), and makes the scrubbed
// copy of a snapshot that is shared (Scrub: secrets and chosen targets
// taken out, what is left scanned for the secrets' shapes). It answers
// providers.Exporter; the Backend embeds it.
//
// It reaches only the store's files by their paths, never a file inside a
// box. It imports only the standard library, golang.org/x/sys/unix,
// providers, providers/local/confined, providers/local/process and
// providers/local/store; it must never import app/..., jobs, package local
// or another backend.
package exports
