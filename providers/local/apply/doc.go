// Package apply writes into a box's folder: Writer brings a folder to
// exactly a snapshot's manifest (a restore's rollback, a fork's new
// folder), checking every piece of content against its hash before it
// changes anything (the content it fetches from the content store is
// written into staged files of its own as it comes, and renamed in once
// all is checked), copies a template folder into a new box's
// (CopyTree, from the template TemplateDir names), and writes one file
// into a running box (WriteBoxFile) and its access file (SetStraight).
// Every path inside a box is reached beneath its folder with no
// link followed (package confined); only the box's folder itself is reached
// by boxsnap's own path to it.
//
// It imports only the standard library, golang.org/x/sys/unix, providers,
// providers/local/confined, providers/local/content,
// providers/local/diskimage, providers/local/journal and
// providers/local/store; it must never import
// app/..., jobs, package local or another backend.
package apply
