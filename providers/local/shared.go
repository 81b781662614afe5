package local

import "github.com/boxsnap/boxsnap/providers"

var _ providers.SharedContent = (*Backend)(nil)

// ContentShared reports whether other hosts reach this backend's snapshots'
// content. Today every snapshot's content is in this host's folder only, so
// it answers false; this is the one place that changes to true once the
// content is kept in a bucket every host reaches (a content store), and a
// move or a takeover of a local box between hosts is then allowed.
func (b *Backend) ContentShared() bool { return false }
