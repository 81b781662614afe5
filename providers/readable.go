package providers

import "context"

// ReadChecker is implemented by Browsers that can tell, before a download's
// first byte, whether they can read a snapshot's files under dir ("" is the
// top) whole: each file's content where it lives, of the size the snapshot
// recorded. A snapshot that cannot be is ErrIncomplete, with the words why
// (a content's hash is checked only as it is read: a mismatch then is a
// read error at its end).
type ReadChecker interface {
	CheckReadable(ctx context.Context, ref SnapshotRef, dir string) error
}
