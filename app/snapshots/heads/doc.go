// Package heads is the boxes' heads and the snapshots' lineages. A
// snapshot records what it was taken from, the box's head at its take; the
// head moves forward by itself on a take or an import of a known
// descendant (the kernel's SetHead, called by those seams), and elsewhere
// only by a restore, a fork, or someone choosing it here (ChooseHead: the
// person, or an agent among the snapshots its thread sees, without a
// restore, written in the box log). heads.go reads a snapshot's or a box's
// lineage as the caller may see it, hiding what it may not, and names a
// row's parent.
//
// Heads is a struct with the one field it uses of its own, the store; what
// it needs of the kernel (records, locks, the box log) it reaches through
// the kernel interface it declares, and the snapshot reads through
// snapshotOps; both are the core's *snapshots.Service, given to New in
// app/boot. words.go is the one home of the words it alone says.
//
// It must never import app/web, app/api, app/cli, jobs, a provider's
// subpackage, nor another seam of the core (a package under
// app/snapshots/).
package heads
