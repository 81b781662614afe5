// Package jobs holds boxsnap's River workers and periodic jobs, registered in
// one place (Register and Periodic), and makes the River client. Workers are
// thin: they call the core, or, for an operation's job, the operation
// engine (app/operations). It must never import app/web or app/api.
package jobs
