// Package snapshots is boxsnap's core: snapshot records and their states,
// boxes and threads, what each kind of operation does and its steps,
// eligible and mayAct, the limits, names, the step names a restore and a
// reset record, the box log and the admission of room. Its operations run on the engine of package
// operations (one at a time per box, on River): kinds.go registers each
// kind's runner with its typed parameters and result (Kinds), and admits
// an operation in the same transaction as the records it changes. The
// engine knows nothing of these rules; a runner leaves a provider task to
// the engine's snooze (Engine.Snoozer) where its step's resume finds what
// the task did.
//
// The kernel is Kernel: the store, the backends, the engine and its kinds,
// and its parts, each a type of its own that Kernel embeds (parts.go):
// Records (the record reads), Admission, BoxLog (the box log's writer) and
// SettingsKeeper (the settings and the time zone). Service embeds it and holds the snapshots' rules and their
// operations (lists, the ceiling, the plan and the room).
//
// The other seams are packages of their own under app/snapshots (and
// app/pictures), each a struct holding only what it uses and reaching the
// kernel through small interfaces it declares, which *Service
// satisfies; the kernel names they use are exported (BoxByID, Admit, End,
// Log, …), each registers its own kinds of operation with the kernel's
// engine, and package seams wires them (for app/boot, app/coretest and
// e2e alike). Package sweeps holds the periodic work (the reconcile, the
// outside-restore scan, the room sweep, the keeps' expiry, automatic
// history's check and thinning, the trash's emptying, housekeeping),
// with its Thin and DeleteHistory operations. Package take
// holds the take (a snapshot of a box, a person's, an agent's or the CLI's,
// and boxsnap's automatic one) with its Take operation, and the undo a
// restore or a reset takes first (TakeUndo); nothing in the kernel calls
// it. Package
// contents holds what a snapshot holds and its moves in and out of boxsnap
// (browsing, showing, downloading and comparing its files, a restore's
// preview, exports, imports and their operation, share codes, a redeem
// from another boxsnap). Package tab holds the Snapshots tab's lists (a page
// of its boxes searched, filtered and sorted, its counts, the Boxes page's
// tabs' counts, each backend's kinds of box and one live box of each).
// Package boxes holds the boxes and threads (acquiring and listing boxes,
// the Machines tab's pages, presence, status, the box log, history
// settings, threads, templates, the trash and a box's release with its
// held copies, forgetting a backend), with its Release and Untrash
// operations. Package approvals holds the requests for the person's word (an agent's
// restore asked, read, listed, approved or declined, the answers its agent
// has not been told, a thread's turns held). Package heads holds the
// boxes' heads and the snapshots' lineages (a lineage read as the caller
// may see it, a row's parent, a head chosen without a restore); the head's
// record itself stays here (SetHead), as a take, a restore, a fork, a reset
// and an import all move it. Package take holds the take and the automatic
// take. Package restore holds a box's restore (its guard, dry run, steps,
// failure and undos replaced), the box set straight after a restore, a
// reset to a fresh box and the undo of either, with its Restore and Reset
// operations; the undo it takes first is the take's (take.Take.TakeUndo),
// but for ZFS's held copy of the stopped guest, its own. Package fork holds the fork (a new box made from a
// snapshot, armed, started and checked, one or many from one snapshot),
// with its Fork operation. Package keep holds a snapshot's keep, its stop
// and its renewal, its delete and the expiry's (with DeleteWith, DeleteStep
// and FinishLeftDeletes, which the take, the restores, the boxes and the
// sweeps delete through), the edits of its name and note, an automatic
// snapshot's save and unsave and a box's Delete history, with its
// Keep, Unkeep, Delete and Expiry operations; their requests and results
// stay here (keeprequests.go), as the dry runs and the sweeps speak them
// too. Package boxview holds a box's page's read model. Package pictures (app/pictures) holds pictures of a box's
// screen (a snapshot's picture read, a take's picture, a restore's undo's
// captured before its stop and held until the undo is taken). The kernel
// calls a seam only through an interface it declares for what it calls,
// given by a setter: PictureKeeper (UsePictures) and BoxReader (UseBoxes).
//
// words.go is the one home of the words a person or an agent reads from the
// kernel and its seams still here (a seam package keeps its own words.go
// for the words it alone says) (what a snapshot holds, prices in their currency, sizes, how long,
// an operation's step, what boxsnap could not confirm, what was done, each
// box log event's words (the pages say its kind), an operation's failure and what boxsnap
// then observed, and every refusal, one named function or constant each,
// grouped by the rule that refuses): the rules, the pages, the API and its
// tools, and the CLI say them through it, and words_test.go tests them. A
// seam in a package of its own keeps the words it alone says in its own
// words.go, and words_once_test.go fails on a piece two of them write. A
// rule never writes a sentence of its own: words_home_test.go fails on one
// written in a log, refusal or failure outside a words.go, here or in a
// seam's package. A refusal (refusal.go) carries a Code, never an HTTP
// status: the API and the web each turn codes into statuses in one place,
// and the core imports no net/http.
//
// It names no backend: it calls them only through package providers. It must
// never import app/web, app/api, app/cli, jobs or a provider's subpackage,
// nor a seam's package (one under it, or app/pictures): each imports the
// kernel.
package snapshots
