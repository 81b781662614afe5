package api

// snapshotReads are the handlers that read snapshots and change nothing:
// the lists, one snapshot, its files, download, comparison, lineage and
// picture. They hold the server, in a type of their own so the server's
// type does not grow.
type snapshotReads struct{ *server }
