package api

// snapshotMoves are the handlers that move snapshots between boxsnaps:
// export, import, and share codes made, listed, revoked, redeemed and
// copied. They hold the server, in a type of their own so the server's
// type does not grow.
type snapshotMoves struct{ *server }
