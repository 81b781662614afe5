// Package fork is the fork: a new box made from a snapshot of another
// (Fork admits it in the source box's order, pinning the snapshot), its
// guest copied by the backend, recorded with its own identity, armed,
// started and checked before it is ready. The new box lands on the host
// the fork is asked on, even when another host owns the source box, from
// the snapshot's content in a content store every host reaches
// (another.go), running with the source box's environment as the database
// recorded it, which app/snapshots/seams gives through UseCarrier.
// ForkMany admits several forks of one snapshot in one call, all or none,
// each then an operation, box and result of its own. A fork of the box as
// it is now starts here too, for every surface: CaptureNow checks it (the
// plan, room for the take and every copy, the names; NameFree never tells
// an agent of another thread's box) and takes the one snapshot, "for a
// fork", that its forks are made from, through the take
// app/snapshots/seams gives it (UseTaker). Its Fork operation is
// registered with the kernel's engine by New.
//
// Forks holds only what it uses: the store, the install's ID, the clock
// and the logger; what it needs of the core (the backends, the record
// reads and locks, the rules a snapshot must pass now, admission and an
// operation's steps and end, the box log) it reaches through its kernel
// interface, which *snapshots.Service satisfies; app/boot makes it.
// words.go holds the words it alone says.
//
// It must never import app/web, app/api, app/cli, jobs, a provider's
// subpackage, nor another seam of the core (a package under
// app/snapshots/).
package fork
