// Package sweeps is boxsnap's periodic work on the snapshots and boxes the
// core keeps, each run by a periodic River job (package jobs): the
// reconcile of every backend's listing with the records (Reconcile, and the
// check that each ready box's guest is still there), the scan of the task
// lists for restores made outside boxsnap (ScanOutside, which sets such a
// box straight, and ScanOutsideHere, a host's scan of its one-host
// backends, as ReconcileHere), the room sweep (RoomSweep), the keeps' expiry
// (ExpireKeeps), automatic history's check (CheckAutomatic) and thinning
// (ThinHistory, with the pure rule Thin), the trash's emptying
// (EmptyDueTrash) and housekeeping (Housekeep).
//
// Sweeps holds only what it uses: the store, the backends, the engine, the
// clock and the logger. What it needs of the core it reaches through small
// interfaces it declares (seam.go): kernel (the settings, the record reads
// and locks, admission, an operation's end, the box log), snaps (the
// automatic take, one snapshot's delete, setting a box straight) and boxes
// (a box's history settings, a box's release from the trash); app/boot
// wires the core's service and boxes into New. New registers the Thin and
// DeleteHistory kinds of operation (Kinds) with the core's engine: a
// thinning admitted here, and the person's Delete history admitted by the
// core, both run here (runThin).
//
// words.go holds the words the sweeps alone say in the box log; the words
// the core or another seam says too stay in app/snapshots/words.go.
//
// It must never import app/web, app/api, app/cli, jobs, app/coretest,
// app/dbtest or a provider's subpackage; it reaches backends only through
// package providers.
package sweeps
