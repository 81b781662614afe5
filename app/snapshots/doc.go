// Package snapshots is boxsnap's core: snapshot records and their states,
// boxes and threads, operations and their steps (one at a time per box, on
// River), eligible and mayAct, the limits, names, the restore's steps, the
// box log and the admission of room. It owns the River args of an
// operation's job, so it inserts the job in the operation's own transaction.
//
// words.go is the one home of the words a person or an agent reads on more
// than one surface (what a snapshot holds, prices in their currency, sizes,
// how long, an operation's step, what boxsnap could not confirm): the pages,
// the API and its tools, and the CLI say them through it. A refusal
// (refusal.go) carries a Code, never an HTTP status: the API and the web
// each turn codes into statuses in one place, and the core imports no
// net/http.
//
// It names no backend: it calls them only through package providers. It must
// never import app/web, app/api, app/cli, jobs or a provider's subpackage.
package snapshots
