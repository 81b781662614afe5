// Package snapshots is boxsnap's core: snapshot records and their states,
// boxes and threads, operations and their steps (one at a time per box, on
// River), eligible and mayAct, the limits, names, the restore's steps, the
// box log and the admission of room. It owns the River args of an
// operation's job, so it inserts the job in the operation's own transaction.
//
// It names no backend: it calls them only through package providers. It must
// never import app/web, app/api, app/cli, jobs or a provider's subpackage.
package snapshots
