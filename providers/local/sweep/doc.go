// Package sweep deletes the local backend's snapshots and sweeps its
// content store: Deletes marks a snapshot as being deleted (it is
// incomplete from then on), removes its folder step by step, and frees
// the content no snapshot holds any more, under the store lock held
// exclusive so no take is about to publish what it frees; Sweep also
// removes what a take cut short left behind (and, through Deletes.Forks,
// what a fork or a reset cut short left), and the shared trees forks
// lie over (package overlay) once no box's state names them. It reaches
// only the store's own folders by their paths, never a file inside a box.
//
// It imports only the standard library, golang.org/x/sys/unix, providers,
// providers/local/content, providers/local/overlay, providers/local/state
// and providers/local/store; it must never import app/..., jobs, package
// local or another backend.
package sweep
