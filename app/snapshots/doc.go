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
// kernel through small interfaces it declares, which *Service satisfies;
// the kernel names they use are exported (BoxByID, Admit, End, Log, …),
// each registers its own kinds of operation with the kernel's engine, and
// package seams wires them (for app/boot, app/coretest and e2e alike).
// Each seam's own doc.go says what it holds, and README.md's Layout lists
// them all. What several seams share stays here: the head's record
// (SetHead), which a take, a restore, a fork, a reset and an import all
// move; a keep's and a delete's requests and results (keeprequests.go),
// which the dry runs and the sweeps speak too; and the record of a take
// (MarkTaken), which the take and a restore's held undo both write. The
// kernel calls a seam only through an interface it declares for what it
// calls, given by a setter: PictureKeeper (UsePictures) and BoxReader
// (UseBoxes).
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
