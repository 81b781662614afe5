// Package answers builds what a REST route of app/api and an agent tool
// answer alike: the shared reads of the core (the boxes one sees, a
// snapshot's folder, file, comparison and lineage, a listing of boxes'
// snapshots, a box as the caller may see it), in lookups.go, and the words
// of a snapshot, a box and an operation's result (a take, a restore, a
// delete, a keep, a fork or many), in words.go and describe.go. Every read
// is asked with the caller, so an answer holds only what that caller may
// see; a reference that names nothing is refused by app/api's own check
// (Lookups.CheckRef) before the core is asked.
//
// app/api holds one Lookups and answers HTTP; this package writes no HTTP
// answer. It must never import app/api, app/api/mcptools, jobs, app/web,
// app/cli, app/store or a provider's subpackage.
package answers
