package api

// snapshotChanges are the handlers that take a snapshot or act on one: its
// restore, fork, delete, name, note, keep, save and renewal. They hold the
// server, in a type of their own so the server's type does not grow.
type snapshotChanges struct{ *server }
