// Package take is the take: a person's, an agent's or the CLI's snapshot of
// a box (Take), admitted in one transaction after the plan, the room, the
// per-box limit and the ceiling allow it; boxsnap's automatic snapshot
// (TakeAutomatic), outside the limit; and the run of both, the take's kind
// of operation, registered with the kernel's engine by New: the picture of
// the box's screen just before it, the backend's snapshot (found again by
// its label after a restart), and the per-box limit, where an agent's sixth
// replaces its thread's oldest. It takes the undos of a restore and a reset
// and a release's final snapshot too (TakeUndo, RecordUndo: undo.go), which
// package seams hands the restores and the boxes; nothing in the kernel
// calls this package.
//
// Take holds only what it uses: the store, the engine its operations run
// on, the install, the clock and the logger; what it needs of the core
// (the backends, the plan and the room, the record reads and locks,
// admission and an operation's steps and end, the box log, and the deletes
// the limit runs) it reaches through its kernel interface, which
// *snapshots.Service satisfies. app/boot gives it the pictures' taker
// (UsePictures) and gives the sweeps it for the automatic check. words.go
// holds the words it alone says.
//
// It must never import app/web, app/api, app/cli, jobs, a provider's
// subpackage, nor another seam of the core (a package under
// app/snapshots/).
package take
