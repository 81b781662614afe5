// Package snapshots is boxsnap's core: snapshot records and their states,
// boxes and threads, what each kind of operation does and its steps,
// eligible and mayAct, the limits, names, the restore's steps, the box log
// and the admission of room. Its operations run on the engine of package
// operations (one at a time per box, on River): kinds.go registers each
// kind's runner with its typed parameters and result (Kinds), and admits
// an operation in the same transaction as the records it changes. The
// engine knows nothing of these rules; a runner leaves a provider task to
// the engine's snooze (Engine.Snoozer) where its step's resume finds what
// the task did.
//
// The service splits along its seams, each a type with the methods that
// belong to it: Service holds the snapshots' rules and their operations
// (take, restore, delete, keep, fork, reset, lists) and reaches the other
// five; Boxes (Service.Boxes) holds boxes and threads (acquiring
// and listing boxes, the Machines tab's pages, presence, status, the box
// log, history settings, threads, templates, the trash and a box's release,
// forgetting a backend); Sweeps (Service.Sweeps) holds the periodic work
// (the reconcile, the outside-restore scan, the room sweep, the keeps'
// expiry, automatic history's check and thinning, the trash's emptying,
// housekeeping); Contents (Service.Contents) holds what a snapshot holds and
// its moves in and out of boxsnap (browsing, showing, downloading and
// comparing its files, a restore's preview, exports, imports and their
// operation, share codes); Pictures (Service.Pictures) holds pictures of a box's screen (a
// snapshot's picture read, the picture taker given, a take's picture, a
// restore's undo's captured before its stop and held until the undo is
// taken); Approvals (Service.Approvals) holds the requests for the person's
// word (an agent's restore asked, read, listed, approved or declined, the
// answers its agent has not been told, a thread's turns held). What every
// seam shares (the store, the backends, the engine, the settings, the time
// zone, the log, the record reads, the caller's box and admission's helpers)
// is the Kernel each embeds; a seam calls another's method through
// that seam's type (s.snaps, s.boxes, s.sweeps, s.contents, s.pictures,
// s.approvals). The Snapshots tab's lists (a page of its boxes searched,
// filtered and sorted, its counts, the Boxes page's tabs' counts, each
// backend's kinds of box and one live box of each) are package tab's
// (app/snapshots/tab), which reads the kernel through a small interface;
// the kernel never imports it.
//
// words.go is the one home of the words a person or an agent reads from the
// core (what a snapshot holds, prices in their currency, sizes, how long,
// an operation's step, what boxsnap could not confirm, what was done, each
// box log event's words and kind, an operation's failure and what boxsnap
// then observed, and every refusal, one named function or constant each,
// grouped by the rule that refuses): the rules, the pages, the API and its
// tools, and the CLI say them through it, and words_test.go tests them. A
// rule never writes a sentence of its own: words_home_test.go fails on one
// written in a log, refusal or failure outside words.go. A refusal (refusal.go) carries a Code, never an
// HTTP status: the API and the web
// each turn codes into statuses in one place, and the core imports no
// net/http.
//
// It names no backend: it calls them only through package providers. It must
// never import app/web, app/api, app/cli, jobs, a provider's subpackage or
// the tab's package (app/snapshots/tab).
package snapshots
