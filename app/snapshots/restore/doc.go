// Package restore is a box's restore to one of its snapshots and a reset
// to a fresh box. Restores admits a restore (who may, the guard, the plan,
// the undo's room and price, or the person asked first for an agent's),
// runs its steps in the backend's order from the step it reached (the
// undo, the stop, the rollback, the box set straight, the start, a swap's
// steps for a held copy), leaves a box it failed on as it found it where it
// can and says how it left it, replaces the oldest undos, answers a dry
// run of it, and sets a box straight after a restore made outside. Resets
// admits and runs a reset (its undo, the fresh box, the logins kept, the
// start), undoes one that cannot finish, previews it, and restores a box
// to its newest undo, of a reset or a restore. Their Restore and Reset
// operations are registered with the kernel's engine by New.
//
// Restores and Resets hold only what they use: the store, the engine, the
// install, the clock and the logger; what they need of the core (the record
// reads and locks, the plan, the room and the ceiling, admission, an
// operation's steps and end, the box log, the head, the deletes of older
// undos) they reach through their kernel interface, the undo they take
// first through their taker interface (the take's TakeUndo, or the held
// copy of ZFS's order, zfsundo.go, made here over the kernel), a
// reset's box template through templates (package boxes), and, given by
// app/boot, the person's word through Asker (package approvals), a dry
// run's changes through RestorePreviewer (package contents) and the undo's
// picture through snapshots.PictureKeeper (package pictures). words.go holds
// the words they alone say. The files stand on floors: results.go (what a
// reset and a dry run answer, and the previewer a dry run asks) and
// seam.go (the types and the interfaces) at the bottom, new.go (New, which
// registers the kinds with their runners) at the top.
//
// It must never import app/web, app/api, app/cli, jobs, a provider's
// subpackage, nor another seam of the core (a package under
// app/snapshots/, or app/pictures).
package restore
