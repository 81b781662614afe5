// Package operations is boxsnap's operation engine: it admits an operation
// (its row first, before anything changes, and its River job in the same
// transaction when no earlier operation of its box runs), queues it, runs it
// by its kind's registered runner, records its steps and its provider task,
// finishes it (queueing the box's next), recovers the ones a dead worker
// left, and lets callers wait for an operation's end.
//
// Each kind of operation registers a typed runner with Register: its
// parameters and its result are Go types, decoded and encoded here, so the
// core, the API and the web read them as types (Kind.Params, Kind.Result).
// A runner's done end is the result it returns, which the engine records
// in the statement (or transaction) that ends the operation.
//
// A runner that starts a provider task it need not watch (a Proxmox task)
// records it through Engine.Snoozer: the job then snoozes (River's
// JobSnooze) instead of holding a worker and its connections while the
// provider works, and when it wakes the engine asks the provider, through
// the TaskReader the core gives it, where the task got to; it runs the
// runner again, resuming, once the task has ended. A restart resumes from
// the recorded task the same way.
//
// A run takes its operation's session lock and marks it started in one
// statement (OpTryStart); a kind may begin its runs with its own statement
// instead (RegisterStarting), which takes the lock and starts the
// operation as OpTryStart does and reads what its runner needs first,
// handed to the runner as a typed argument. An end done or failed inside its run lets the
// lock go in the end's own statement.
//
// One listener per engine (one LISTEN connection, held only while someone
// waits) fans the operations' ends out to every waiting caller.
//
// It knows nothing of snapshots' rules: which operations a box may have,
// what a kind does and what its words are belong to the core
// (app/snapshots). It must never import app/snapshots, app/web, app/api,
// app/cli, jobs or a provider's subpackage; of providers it uses only the
// task's reference and outcome types. It runs its queries
// (sql/queries/operations.sql) through app/store's generated functions.
package operations
