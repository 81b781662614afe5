// Package keep holds the changes to a snapshot that keep it or let it go:
// Keep, Unkeep and Renew (the keep date written on the backend's label
// first, then on the record), Delete and the expiry's delete (the kinds of
// operation New registers with the kernel's engine), DeleteWith, DeleteStep
// and FinishLeftDeletes, which the restores', the take's, the boxes' and
// the sweeps' steps run through small interfaces of their own, the edits
// of a snapshot's name and note (Rename, SetNote), an automatic snapshot's
// save and unsave (Save, Unsave: it leaves or rejoins automatic history)
// and a box's Delete history (DeleteHistory admits the operation, which
// the sweeps' thinning runs); KeepCeiling says why a Keep or a renewal is
// refused while the rate held is past the ceiling, before the person asks.
//
// Keeps hold only what they use: the store, the engine, the clock and the
// logger; what they need of the core (the backends, the settings, the
// record reads and locks, admission and an operation's steps and end, the
// box log, the ceiling and an earlier guest's release) they reach through
// their kernel interface, which *snapshots.Service satisfies; app/boot
// wires them. The requests and results they answer (snapshots.KeepRequest,
// DeleteRequest, DeleteResult, DeleteParams, KeepResult) stay in the kernel,
// since the dry runs and the sweeps speak them too. words.go holds the
// words they alone say.
//
// It must never import app/web, app/api, app/cli, jobs, a provider's
// subpackage, nor another seam of the core (a package under
// app/snapshots/, or app/pictures).
package keep
