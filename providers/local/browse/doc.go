// Package browse is the local backend's look inside its snapshots and
// boxes: Files lists a snapshot's folders, reads and compares its files
// with another snapshot or with the box now (providers.Browser), streams
// them for a download, and checks before one that every file's content is
// in the store whole (providers.ReadChecker). It reads manifests and
// content from the store, and a box's own files only beneath its folder
// (providers/local/confined), never by a path inside it. A caller's path
// is cleaned, a path through a link refused, and each refusal worded as
// the guests' looks do (providers/guestfiles). The Backend embeds it.
//
// It imports only the standard library, golang.org/x/sys/unix, providers,
// providers/guestfiles, providers/local/confined and providers/local/store;
// it must never import app/..., jobs, package local or another backend.
package browse
